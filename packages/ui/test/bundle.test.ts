// The built page against its budget: under 100 KB of script gzipped, and nothing in it that the
// page's Content-Security-Policy (no 'unsafe-eval', no inline script) would block.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { uiDir } from '@berm/ui';

describe('the built page', () => {
  it('has under 100 KB of script gzipped, none of it compiled from strings at run time', async () => {
    const assets = path.join(uiDir, 'assets');
    const scripts = (await readdir(assets)).filter((f) => f.endsWith('.js'));
    expect(scripts).toHaveLength(1);
    const code = await readFile(path.join(assets, scripts[0]!));
    expect(gzipSync(code).length).toBeLessThan(100 * 1024);
    expect(code.toString('utf8')).not.toMatch(/new Function\(|\beval\(/);
  });

  it('names its script and stylesheet by content hash, and its HTML inlines neither', async () => {
    const html = await readFile(path.join(uiDir, 'index.html'), 'utf8');
    const referenced = [...html.matchAll(/(?:src|href)="\/assets\/([^"]+)"/g)].map((m) => m[1]);
    expect(referenced.sort()).toEqual((await readdir(path.join(uiDir, 'assets'))).sort());
    for (const name of referenced) expect(name).toMatch(/^index-[\w-]{8}\.(js|css)$/);
    expect(html).not.toMatch(/<style|\sstyle=|<script>/);
  });
});
