/**
 * bermd's structured log: pino's JSON lines on stderr, written synchronously (a line logged before an
 * answer is sent is on stderr before the answer leaves). Each line passes two last checks on its way:
 * - with values to hide (secrets, the store's password), they are replaced by their labels;
 * - DEL and C1 are escaped. The log carries text guests chose (`berm.log` lines, events' fields), JSON
 *   writes those characters raw, and a terminal that reads U+009B as CSI would run the sequence it
 *   starts. The redaction comes first, so a value holding such a character is still found as JSON
 *   wrote it.
 */
import { escapeRawControls } from '@berm/manifest';
import { type Logger, pino } from 'pino';
import type { Secrets } from './egress/index.js';

interface LineSink {
  write(line: string): unknown;
}

/** What reaches the log once the values `secrets` hides are replaced and raw controls escaped. */
export function logSink(target: LineSink, secrets: Secrets): { write(line: string): boolean } {
  return {
    write(line: string): boolean {
      target.write(escapeRawControls(secrets.redact(line)));
      return true;
    },
  };
}

/**
 * The daemon's logger at `level`. Every line is checked for the values `secrets` holds at the time of
 * writing, so values a SIGHUP loads later are hidden too.
 */
export function stderrLogger(level: string, secrets: Secrets): Logger {
  return pino({ name: 'bermd', level }, logSink(pino.destination({ dest: 2, sync: true }), secrets));
}
