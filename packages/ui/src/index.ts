/**
 * The built page: `index.html` and its hashed `assets/`, bundled at build time from `web/` (see
 * `vite.config.ts`). bermd serves this directory at `/`; nothing in it is fetched from elsewhere.
 */
import { fileURLToPath } from 'node:url';

/** The directory holding the built page, with a trailing separator. */
export const uiDir: string = fileURLToPath(new URL('./web/', import.meta.url));
