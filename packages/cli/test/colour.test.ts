// stdout's paint under NO_COLOR is the plain one, without loading chalk: it must paint as chalk at level 0,
// which NO_COLOR asked of it before, for any text.
import { Chalk } from 'chalk';
import { afterEach, describe, expect, it } from 'vitest';
import { stdoutPaint } from '../dist/colour.js';

const STYLES = ['bold', 'dim', 'red', 'yellow', 'green', 'cyan'] as const;
const TEXTS = ['', 'plain', 'two\nlines', '\u001b[31malready red\u001b[39m', 'ünïcödé ✓', ' spaced ', '%s %d'];

describe('stdout paint', () => {
  const before = { NO_COLOR: process.env.NO_COLOR, FORCE_COLOR: process.env.FORCE_COLOR };
  afterEach(() => {
    for (const [name, value] of Object.entries(before)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('paints under NO_COLOR as chalk at level 0, FORCE_COLOR notwithstanding', async () => {
    process.env.NO_COLOR = '1';
    process.env.FORCE_COLOR = '3';
    const paint = await stdoutPaint();
    const chalk = new Chalk({ level: 0 });
    for (const style of STYLES) for (const text of TEXTS) expect(paint[style](text)).toBe(chalk[style](text));
  });
});
