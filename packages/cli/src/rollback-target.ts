/**
 * What `berm rollback --to` names: a digest as bermd keeps it (`sha256:` and 64 hex digits), or the start
 * of one, as `berm history` shows it (12 hex digits), which is read against the images bermd keeps for
 * the name, as `docker` reads an image id's prefix.
 */
import type { BermClient } from '@berm/client';
import { CliError } from './failure.js';
import { shortDigest } from '@berm/format/harness';

const FULL = /^sha256:[0-9a-f]{64}$/;
const PREFIX = /^(?:sha256:)?([0-9a-f]{4,64})$/;

/** The full digest `given` names among what bermd serves and keeps for `name`. */
export async function resolveDigest(client: BermClient, name: string, given: string): Promise<string> {
  if (FULL.test(given)) return given;
  const hex = PREFIX.exec(given)?.[1];
  if (hex === undefined)
    throw new CliError(
      'usage',
      `--to ${JSON.stringify(given)} is not a digest: give sha256: and 64 hex digits, or at least 4 of its first hex digits as berm history shows them`,
      { to: given },
    );
  const { current, retained } = await client.images(name);
  const known = [...(current === null ? [] : [current.digest]), ...retained.map((r) => r.digest)];
  const matches = [...new Set(known.filter((digest) => digest.startsWith(`sha256:${hex}`)))];
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) {
    const kept = retained.map((r) => shortDigest(r.digest));
    throw new CliError(
      'not-retained',
      `cannot roll ${name} back: it keeps no image whose digest starts ${hex} (${kept.length === 0 ? 'it keeps none besides the one it serves' : `it keeps ${kept.join(', ')}`})`,
      { name, to: given, retained: retained.map((r) => r.digest), status: 404 },
    );
  }
  throw new CliError(
    'usage',
    `--to ${hex} names ${matches.length} images of ${name}: give more of the digest (${matches.map(shortDigest).join(', ')})`,
    {
      to: given,
      matches,
    },
  );
}
