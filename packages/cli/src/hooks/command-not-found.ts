import type { Hook } from '@oclif/core/hooks';
import { CLIError } from '@oclif/core/errors';
import { notFoundMessage } from '../not-found.js';

export { suggestion } from '../not-found.js';

/**
 * oclif's `command_not_found` hook: a mistyped command is a usage error that names the command it was
 * probably meant to be (not-found.ts). Written here rather than taken from @oclif/plugin-not-found, which
 * asks "did you mean …? (y/n)" on a terminal and runs the answer: a script typing a wrong command must fail
 * the same way on a terminal and off one. oclif imports a hook only when its event fires, so this
 * costs nothing to a command line that names a command.
 */
const hook: Hook<'command_not_found'> = async ({ id, config }) => {
  throw new CLIError(notFoundMessage(id, config.commands, config.topicSeparator));
};

export default hook;
