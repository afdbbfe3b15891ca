/**
 * The name a build gives its image: package.json's name without its scope, else the directory's. The
 * CLI writes the image as `build/<name>.wasm` and prints the name, so it must be a harness name (the
 * protocol's rule, the name it is deployed under): that rule has no dot, slash or control character,
 * so `"../../x"` cannot write outside the project and an escape sequence cannot reach a terminal.
 */
import { basename, join } from 'node:path';
import { isHarnessName } from '@berm/protocol';
import { GuestError } from './errors.js';
import { PACKAGE_JSON, type ProjectProblem, readProject } from './transform/project.js';

const RULE = "1 to 64 letters, digits, '_' or '-' (no dots, slashes or spaces)";

/**
 * The image's name for the project in `dir` (`shownDir` as the user gave it), from package.json's text
 * (null when there is none). Undefined when package.json itself has problems: the compile reports
 * them where they are, and refuses. Throws `bad-package-name` for a name outside the rule.
 */
export function imageName(packageText: string | null, dir: string, shownDir: string): string | undefined {
  const problems: ProjectProblem[] = [];
  const project = readProject(packageText, null, problems);
  if (problems.length > 0) return undefined;
  const file = join(shownDir, PACKAGE_JSON);
  if (project.name !== '') {
    if (isHarnessName(project.name)) return project.name;
    const given = (JSON.parse(packageText!) as { name: string }).name;
    throw new GuestError(
      'bad-package-name',
      `${file}: the name ${JSON.stringify(given)} is not a harness name, and it names the image (build/<name>.wasm, without the scope): use ${RULE}, as in "weather" or "@acme/weather"`,
      { file, name: given },
    );
  }
  const fallback = basename(dir);
  if (isHarnessName(fallback)) return fallback;
  const missing = packageText === null ? `${shownDir} has no ${PACKAGE_JSON}` : `${file} has no name`;
  throw new GuestError(
    'bad-package-name',
    `${missing}, and the directory's name ${JSON.stringify(fallback)}, which would name the image, is not a harness name: give ${PACKAGE_JSON} a "name" of ${RULE}, as in "weather"`,
    { file, name: fallback },
  );
}
