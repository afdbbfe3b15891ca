// The store's password is hidden from the log in every form it could appear in, a password that is not
// valid percent-encoding (`%zz`) included: decodeURIComponent throws on it, while node-postgres reads it
// (and sends it) as written, or half-decoded.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { storePasswords } from '../dist/deploy/index.js';
import { closedPort } from '../../../test/helpers/loopback.js';
import { exited, launchDaemon, startDaemon } from './daemon.js';
import { createDatabase, describePostgres, dropDatabase } from './postgres.js';

/** Not valid percent-encoding; node-postgres sends it as `xA%zz-not-logged`. */
const PASSWORD = 'x%41%zz-not-logged';
const SENT = 'xA%zz-not-logged';

/** What node-postgres itself would send as the password for `url`. */
const sentBy = (url: string): string | undefined => new pg.Client({ connectionString: url }).password;

describe('storePasswords', () => {
  it('holds the password as written and as node-postgres sends it, when it is not valid percent-encoding', () => {
    const url = `postgres://berm:${PASSWORD}@db.example:5432/berm`;
    expect(sentBy(url)).toBe(SENT);
    expect(storePasswords(url)).toEqual(expect.arrayContaining([PASSWORD, SENT]));
  });

  it('holds it as written and decoded when it is valid, from the query string too, and nothing when there is none', () => {
    const url = 'postgres://berm:p%40ss%2Fw0rd@db.example/berm';
    expect(sentBy(url)).toBe('p@ss/w0rd');
    expect(storePasswords(url)).toEqual(expect.arrayContaining(['p%40ss%2Fw0rd', 'p@ss/w0rd']));
    expect(storePasswords('postgres://berm@db.example/berm?password=in-the-query')).toEqual(['in-the-query']);
    expect(storePasswords('postgres://berm@db.example/berm')).toEqual([]);
  });
});

describe('a store URL whose password is not valid percent-encoding', () => {
  it('never puts the password in the log when bermd gives up on a database out of reach', async () => {
    const port = await closedPort();
    const launched = await launchDaemon({
      store: `postgres://berm:${PASSWORD}@127.0.0.1:${port}/berm`,
      args: ['--store-wait', '0', '--log-level', 'debug'],
    });
    expect(await exited(launched.process)).toBe(1);
    expect(launched.stderr()).toContain(`the store postgres://berm@127.0.0.1:${port}/berm did not answer`);
    for (const form of [PASSWORD, SENT, 'zz-not-logged']) expect(launched.stderr() + launched.stdout()).not.toContain(form);
  });

  describePostgres('with a database that takes it', { timeout: 60_000 }, () => {
    it('hides it, as written and as sent, on every log line that would hold it', async () => {
      const db = await createDatabase();
      try {
        const url = new URL(db);
        url.password = PASSWORD;
        // The test server trusts loopback: the password is sent, not needed.
        const d = await startDaemon({ store: url.href, args: ['--log-level', 'debug'] });
        try {
          // A request's URL is logged: one that names the password puts it on a log line.
          for (const form of [PASSWORD, SENT]) expect((await fetch(`${d.url}/harnesses?q=${form}`)).status).toBe(200);
        } finally {
          await d.stop(); // the log is read to its end
        }
        expect(d.stderr()).not.toContain('zz-not-logged');
        const urls = d.log().flatMap((e) => (e.msg === 'incoming request' ? [(e.req as { url: string }).url] : []));
        expect(urls).toEqual(['/harnesses?q=[store password]', '/harnesses?q=[store password]']);
      } finally {
        await dropDatabase(db);
      }
    });
  });
});
