/**
 * Registry credentials where docker keeps them, so a `docker login` (or `crab registry login`) serves crab
 * and the other way round: `$DOCKER_CONFIG/config.json` (else `~/.docker/config.json`) with `auths` (base64
 * `user:password` in `auth`), `credHelpers` per host and `credsStore` for the rest, both run as
 * `docker-credential-NAME get|store|erase`. `BERM_REGISTRY_AUTH` comes first: the same document's `auths`
 * inline, for CI, where a secret is an environment variable rather than a file.
 */
import { spawn } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { OciError, escapeText } from './errors.js';

export interface Credential {
  username: string;
  password: string;
}

interface AuthEntry {
  auth?: string;
  username?: string;
  password?: string;
}

interface DockerConfig {
  auths?: Record<string, AuthEntry>;
  credHelpers?: Record<string, string>;
  credsStore?: string;
  [other: string]: unknown;
}

export const AUTH_ENV = 'BERM_REGISTRY_AUTH';

export interface CredentialOptions {
  env?: NodeJS.ProcessEnv;
}

export function dockerConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.DOCKER_CONFIG ?? join(homedir(), '.docker'), 'config.json');
}

/** `https://ghcr.io/v1/`, `ghcr.io`: docker writes a key either way; both are the host. */
function hostOfKey(key: string): string {
  return key.replace(/^[a-z]+:\/\//i, '').replace(/\/.*$/, '');
}

function entryFor(auths: Record<string, AuthEntry> | undefined, host: string): AuthEntry | undefined {
  if (auths === undefined || typeof auths !== 'object') return undefined;
  for (const [key, entry] of Object.entries(auths))
    if (hostOfKey(key) === host && typeof entry === 'object' && entry !== null) return entry;
  return undefined;
}

function fromEntry(entry: AuthEntry | undefined, where: string): Credential | undefined {
  if (entry === undefined) return undefined;
  if (typeof entry.username === 'string' && typeof entry.password === 'string')
    return { username: entry.username, password: entry.password };
  if (typeof entry.auth !== 'string' || entry.auth === '') return undefined;
  const text = Buffer.from(entry.auth, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon < 0) throw new OciError('registry-auth-unreadable', `${where}: an auth entry is not base64 of USER:PASSWORD`, { file: where });
  return { username: text.slice(0, colon), password: text.slice(colon + 1) };
}

async function readConfig(path: string): Promise<DockerConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new OciError('registry-auth-unreadable', `cannot read ${path}: ${(e as Error).message}`, { file: path });
  }
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not an object');
    return value as DockerConfig;
  } catch {
    throw new OciError('registry-auth-unreadable', `${path} is not a JSON object as docker writes it: fix or remove it`, { file: path });
  }
}

function envConfig(env: NodeJS.ProcessEnv): DockerConfig | undefined {
  const text = env[AUTH_ENV];
  if (text === undefined || text === '') return undefined;
  try {
    const value = JSON.parse(text) as DockerConfig;
    if (typeof value === 'object' && value !== null && typeof value.auths === 'object') return value;
  } catch {
    // said below, without quoting the variable: it holds secrets
  }
  throw new OciError(
    'registry-auth-unreadable',
    `${AUTH_ENV} is not {"auths": {"HOST": {"username": …, "password": …}}} (or docker's "auth"): fix the variable`,
    {
      variable: AUTH_ENV,
    },
  );
}

/** The credential for `host`, or undefined for anonymous access. */
export async function credentialFor(host: string, options: CredentialOptions = {}): Promise<Credential | undefined> {
  const env = options.env ?? process.env;
  const inline = envConfig(env);
  const fromEnv = fromEntry(entryFor(inline?.auths, host), AUTH_ENV);
  if (fromEnv !== undefined) return fromEnv;
  const path = dockerConfigPath(env);
  const config = await readConfig(path);
  const helper = helperFor(config, host, 'credHelpers');
  if (helper !== undefined) return helperGet(helper, host, env);
  const stored = fromEntry(entryFor(config.auths, host), path);
  if (stored !== undefined) return stored;
  if (typeof config.credsStore === 'string' && config.credsStore !== '') return helperGet(config.credsStore, host, env);
  return undefined;
}

function helperFor(config: DockerConfig, host: string, key: 'credHelpers'): string | undefined {
  const helpers = config[key];
  if (typeof helpers !== 'object' || helpers === null) return undefined;
  for (const [k, v] of Object.entries(helpers)) if (hostOfKey(k) === host && typeof v === 'string' && v !== '') return v;
  return undefined;
}

/** Stores `credential` for `host` as docker would: through its helper when one is configured, else in `auths`. */
export async function storeCredential(host: string, credential: Credential, options: CredentialOptions = {}): Promise<string> {
  const env = options.env ?? process.env;
  const path = dockerConfigPath(env);
  const config = await readConfig(path);
  const helper =
    helperFor(config, host, 'credHelpers') ??
    (typeof config.credsStore === 'string' && config.credsStore !== '' ? config.credsStore : undefined);
  if (helper !== undefined) {
    await runHelper(helper, 'store', JSON.stringify({ ServerURL: host, Username: credential.username, Secret: credential.password }), env);
    return `docker-credential-${helper}`;
  }
  const auths = { ...(config.auths ?? {}) };
  for (const key of Object.keys(auths)) if (hostOfKey(key) === host) delete auths[key];
  auths[host] = { auth: Buffer.from(`${credential.username}:${credential.password}`).toString('base64') };
  await writeConfig(path, { ...config, auths });
  return path;
}

/** Forgets `host`'s credential; false when none was stored. */
export async function eraseCredential(host: string, options: CredentialOptions = {}): Promise<boolean> {
  const env = options.env ?? process.env;
  const path = dockerConfigPath(env);
  const config = await readConfig(path);
  const helper =
    helperFor(config, host, 'credHelpers') ??
    (typeof config.credsStore === 'string' && config.credsStore !== '' ? config.credsStore : undefined);
  let erased = false;
  if (helper !== undefined) erased = (await runHelper(helper, 'erase', host, env, true)) !== undefined;
  const auths = { ...(config.auths ?? {}) };
  const keys = Object.keys(auths).filter((k) => hostOfKey(k) === host);
  if (keys.length > 0) {
    for (const key of keys) delete auths[key];
    await writeConfig(path, { ...config, auths });
    erased = true;
  }
  return erased;
}

async function writeConfig(path: string, config: DockerConfig): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await writeFileAtomic(path, `${JSON.stringify(config, null, '\t')}\n`, { mode: 0o600 });
}

async function helperGet(helper: string, host: string, env: NodeJS.ProcessEnv): Promise<Credential | undefined> {
  const out = await runHelper(helper, 'get', host, env, true);
  if (out === undefined) return undefined;
  try {
    const { Username, Secret } = JSON.parse(out) as { Username?: unknown; Secret?: unknown };
    if (typeof Username === 'string' && typeof Secret === 'string') return { username: Username, password: Secret };
  } catch {
    // said below, without what the helper printed: it may hold the secret
  }
  throw new OciError(
    'credential-helper-failed',
    `docker-credential-${helper} get answered something other than {"Username", "Secret"} for ${host}`,
    {
      helper,
      host,
    },
  );
}

/**
 * Runs `docker-credential-NAME VERB` with `input` on its stdin. With `absentOk`, the helper's "not found"
 * (exit 1 saying credentials not found) is undefined; any other failure is `credential-helper-failed`,
 * quoting its stderr escaped (helpers do not print secrets there), never its stdout.
 */
function runHelper(helper: string, verb: string, input: string, env: NodeJS.ProcessEnv, absentOk = false): Promise<string | undefined> {
  const program = `docker-credential-${helper}`;
  return new Promise((resolve, reject) => {
    const child = spawn(program, [verb], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e) =>
      reject(
        new OciError(
          'credential-helper-failed',
          `cannot run ${program} (named in ${dockerConfigPath(env)}): ${(e as NodeJS.ErrnoException).code ?? e.message}; install it or remove it from the file`,
          {
            helper,
          },
        ),
      ),
    );
    child.on('close', (code) => {
      const stdout = Buffer.concat(out).toString('utf8');
      const stderr = Buffer.concat(err).toString('utf8').trim();
      if (code === 0) return resolve(stdout);
      if (absentOk && /not found/i.test(`${stdout} ${stderr}`)) return resolve(undefined);
      reject(
        new OciError(
          'credential-helper-failed',
          `${program} ${verb} failed (exit ${code}): ${escapeText(stderr || stdout.trim() || 'no message')}`,
          { helper },
        ),
      );
    });
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });
}
