/**
 * The deploy room's light door: admission alone (the image checks, limits and grants), for the embedded
 * runtime, which admits images as a deploy does but keeps no store. The room's own door (index.ts)
 * also opens the registry and both stores, and with them PostgreSQL's driver, which a `crab run` would
 * pay for at every start and never use.
 */
export { admit } from './admission.js';
export { grantedAsks } from './bindings.js';
