// Docker's credential helpers as crab uses them, against Debian's docker-registry with htpasswd on
// loopback: a stub `docker-credential-NAME` (a shell script this file writes into a directory put first
// on PATH) answering the helper protocol from a file of its own and logging each verb it was run with.
// `credHelpers` and `credsStore` answer `get` for a pull; `crab registry login` stores through the helper
// the config names and `logout` erases through it, docker's config never holding the password; a helper
// that fails is `credential-helper-failed` (exit 2), its words escaped and no secret shown.
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { harnessImage, manifestWithTools } from '../../../test/helpers/harness.js';
import { describeRegistry, sha256, startRegistry, type RunningRegistry } from '../../oci/test/registry-server.js';
import { Scratch, runCli } from './helpers/cli.js';

let locked: RunningRegistry;
let scratch: Scratch;
let bin: string;
let image: Uint8Array;
let file: string;
const PASSWORD = 'helper-held-password';
const REPO = 'org/helped:1';

/**
 * The stub helper: `store` keeps the JSON it reads, `get` prints it back for the host it was stored for
 * (else says "credentials not found", as docker's helpers do), `erase` forgets it; each run is logged as
 * `VERB INPUT-HOST` in `calls`, so a test sees which verbs ran for which host.
 */
const STUB = `#!/bin/sh
dir="$(dirname "$0")/state-$(basename "$0")"
mkdir -p "$dir"
input="$(cat)"
case "$1" in
  get)
    echo "get $input" >> "$dir/calls"
    if [ -f "$dir/stored.json" ] && grep -q "\\"ServerURL\\":\\"$input\\"" "$dir/stored.json"; then cat "$dir/stored.json"; exit 0; fi
    echo "credentials not found in native keychain"; exit 1 ;;
  store)
    echo "store $(printf %s "$input" | sed 's/.*"ServerURL":"\\([^"]*\\)".*/\\1/')" >> "$dir/calls"
    printf %s "$input" > "$dir/stored.json" ;;
  erase)
    echo "erase $input" >> "$dir/calls"
    rm -f "$dir/stored.json" ;;
  *) echo "unknown verb $1" >&2; exit 2 ;;
esac
`;

/**
 * A helper that fails as a broken keychain would: a secret on stdout (which crab must never show) and, on
 * stderr, words carrying a terminal escape (which crab must show escaped).
 */
const BROKEN = `#!/bin/sh
cat > /dev/null
printf '{"Secret":"leaked-from-broken-helper"}'
printf 'keychain locked \\033[31mred\\033[0m\\n' >&2
exit 3
`;

async function helper(name: string, script: string): Promise<string> {
  const program = path.join(bin, `docker-credential-${name}`);
  await writeFile(program, script);
  await chmod(program, 0o755);
  await rm(path.join(bin, `state-docker-credential-${name}`), { recursive: true, force: true });
  return path.join(bin, `state-docker-credential-${name}`);
}

async function calls(state: string): Promise<string[]> {
  return (await readFile(path.join(state, 'calls'), 'utf8').catch(() => '')).split('\n').filter((l) => l !== '');
}

async function dockerConfig(name: string, config: Record<string, unknown>): Promise<string> {
  const dir = path.join(scratch.dir, name);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'config.json'), JSON.stringify(config));
  return dir;
}

const env = (dockerDir: string) => ({
  DOCKER_CONFIG: dockerDir,
  BERM_REGISTRY_AUTH: undefined,
  PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}`,
});

const storedFor = (host: string, username = 'ci', secret = PASSWORD) =>
  JSON.stringify({ ServerURL: host, Username: username, Secret: secret });

describeRegistry('crab and docker credential helpers', { timeout: 120_000 }, () => {
  beforeAll(async () => {
    locked = await startRegistry({ users: { ci: PASSWORD } });
    scratch = await Scratch.create();
    bin = path.join(scratch.dir, 'bin');
    await mkdir(bin, { recursive: true });
    image = await harnessImage(manifestWithTools(['echo'], { version: '1.0.0' }));
    file = await scratch.write('helped.wasm', image);
    const auth = JSON.stringify({ auths: { [locked.host]: { username: 'ci', password: PASSWORD } } });
    const pushed = await runCli(['push', file, `oci://${locked.host}/${REPO}`], {
      env: { DOCKER_CONFIG: path.join(scratch.dir, 'none'), BERM_REGISTRY_AUTH: auth },
    });
    expect(pushed.code).toBe(0);
  });

  afterAll(async () => {
    await locked?.stop();
    await scratch?.remove();
  });

  it("pulls with the credential credHelpers' helper gives for the host, asking it with the host on stdin", async () => {
    const state = await helper('perhost', STUB);
    await mkdir(state, { recursive: true });
    await writeFile(path.join(state, 'stored.json'), storedFor(locked.host));
    const dir = await dockerConfig('per-host', { credHelpers: { [locked.host]: 'perhost' } });
    const out = path.join(scratch.dir, 'per-host.wasm');
    const r = await runCli(['pull', `oci://${locked.host}/${REPO}`, '-o', out], { env: env(dir) });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(sha256(await readFile(out))).toBe(sha256(image));
    expect(await calls(state)).toContain(`get ${locked.host}`);
    expect(r.stdout + r.stderr).not.toContain(PASSWORD);
  });

  it("falls back to credsStore's helper for a host credHelpers does not name; its not-found is anonymous, refused by the registry", async () => {
    const state = await helper('store', STUB);
    await mkdir(state, { recursive: true });
    await writeFile(path.join(state, 'stored.json'), storedFor(locked.host));
    const dir = await dockerConfig('store', { credsStore: 'store', credHelpers: { 'other.example': 'perhost' } });
    const r = await runCli(['pull', '--json', `oci://${locked.host}/${REPO}`, '-o', path.join(scratch.dir, 'store.wasm')], {
      env: env(dir),
    });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).image_digest).toBe(sha256(image));
    expect(await calls(state)).toContain(`get ${locked.host}`);

    await rm(path.join(state, 'stored.json'));
    const anonymous = await runCli(['pull', '--json', `oci://${locked.host}/${REPO}`, '-o', path.join(scratch.dir, 'anon.wasm')], {
      env: env(dir),
    });
    expect(anonymous.code).toBe(2);
    expect(JSON.parse(anonymous.stdout).error.code).toBe('registry-unauthorized');
  });

  it('logs in through the helper the config names (store), pulls through it (get), and logs out through it (erase)', async () => {
    const state = await helper('keychain', STUB);
    const dir = await dockerConfig('login', { credsStore: 'keychain' });
    const login = await runCli(['registry', 'login', locked.host, '-u', 'ci', '--password-stdin'], {
      env: env(dir),
      input: `${PASSWORD}\n`,
    });
    expect(login.stderr).toBe('');
    expect(login.code).toBe(0);
    expect(login.stdout).toContain('docker-credential-keychain');
    expect(login.stdout).not.toContain(PASSWORD);
    // The helper holds the password, docker's config does not.
    expect(JSON.parse(await readFile(path.join(state, 'stored.json'), 'utf8'))).toEqual({
      ServerURL: locked.host,
      Username: 'ci',
      Secret: PASSWORD,
    });
    expect(await readFile(path.join(dir, 'config.json'), 'utf8')).not.toContain(Buffer.from(`ci:${PASSWORD}`).toString('base64'));
    expect(await readFile(path.join(dir, 'config.json'), 'utf8')).not.toContain(PASSWORD);

    const pulled = await runCli(['inspect', '--json', `oci://${locked.host}/${REPO}`], { env: env(dir) });
    expect(pulled.code).toBe(0);
    expect(JSON.parse(pulled.stdout).version).toBe('1.0.0');

    const logout = await runCli(['registry', 'logout', locked.host], { env: env(dir) });
    expect(logout.code).toBe(0);
    expect(await calls(state)).toEqual([`store ${locked.host}`, `get ${locked.host}`, `erase ${locked.host}`]);
    const after = await runCli(['inspect', '--json', `oci://${locked.host}/${REPO}`], { env: env(dir) });
    expect(after.code).toBe(2);
    expect(JSON.parse(after.stdout).error.code).toBe('registry-unauthorized');
  });

  it('refuses with credential-helper-failed (exit 2) when the helper fails: its words escaped, no secret shown', async () => {
    await helper('broken', BROKEN);
    const dir = await dockerConfig('broken', { credHelpers: { [locked.host]: 'broken' } });
    for (const json of [true, false]) {
      const r = await runCli(
        ['pull', ...(json ? ['--json'] : []), `oci://${locked.host}/${REPO}`, '-o', path.join(scratch.dir, 'b.wasm')],
        {
          env: env(dir),
        },
      );
      expect(r.code).toBe(2);
      const said = json ? JSON.parse(r.stdout).error : { code: undefined, message: r.stderr };
      if (json) expect(said.code).toBe('credential-helper-failed');
      expect(said.message).toContain('docker-credential-broken get failed (exit 3)');
      expect(said.message).toContain('keychain locked \\u001b[31mred\\u001b[0m');
      expect(r.stdout + r.stderr).not.toContain('\u001b');
      expect(r.stdout + r.stderr).not.toContain('leaked-from-broken-helper');
    }

    const login = await runCli(['registry', 'login', locked.host, '-u', 'ci', '--password-stdin'], {
      env: env(dir),
      input: `${PASSWORD}\n`,
    });
    expect(login.code).toBe(2);
    expect(login.stderr).toContain('docker-credential-broken store failed');
    expect(login.stdout + login.stderr).not.toContain(PASSWORD);
    expect(login.stdout + login.stderr).not.toContain('leaked-from-broken-helper');

    const missing = await dockerConfig('missing', { credsStore: 'absent-helper' });
    const r = await runCli(['pull', '--json', `oci://${locked.host}/${REPO}`, '-o', path.join(scratch.dir, 'm.wasm')], {
      env: env(missing),
    });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error).toMatchObject({ code: 'credential-helper-failed' });
    expect(JSON.parse(r.stdout).error.message).toContain('docker-credential-absent-helper');
  });
});
