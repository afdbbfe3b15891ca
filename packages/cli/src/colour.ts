import type { Paint } from '@berm/format/paint';

/**
 * Colour for stdout. chalk turns it off when stdout is not a terminal and on with FORCE_COLOR;
 * it does not read NO_COLOR, so this does: a non-empty NO_COLOR turns colour off, FORCE_COLOR
 * notwithstanding (https://no-color.org). Imported lazily: output that is not coloured
 * (`--json`, the github and markdown formats) never loads chalk.
 */
export async function stdoutPaint(): Promise<Paint> {
  const { Chalk, supportsColor } = await import('chalk');
  const noColor = (process.env.NO_COLOR ?? '') !== '';
  return new Chalk({ level: noColor || !supportsColor ? 0 : supportsColor.level });
}
