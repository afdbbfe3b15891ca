import { type Paint, plain } from '@berm/format/paint';

/**
 * Colour for stdout. chalk turns it off when stdout is not a terminal and on with FORCE_COLOR;
 * it does not read NO_COLOR, so this does: a non-empty NO_COLOR turns colour off, FORCE_COLOR
 * notwithstanding (https://no-color.org). Imported lazily: output that is not coloured
 * (`--json`, the github and markdown formats, NO_COLOR) never loads chalk. chalk at level 0 gives its
 * text back as it was, which is what `plain` does.
 */
export async function stdoutPaint(): Promise<Paint> {
  if ((process.env.NO_COLOR ?? '') !== '') return plain;
  const { Chalk, supportsColor } = await import('chalk');
  return new Chalk({ level: supportsColor ? supportsColor.level : 0 });
}
