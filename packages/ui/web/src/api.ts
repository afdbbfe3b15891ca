/** The control API over fetch: the same requests curl makes, with the token as a header. */
import { encodeDeployQuery } from '@berm/protocol';
import { authHeaders } from './credentials.js';
import type {
  DeployOptions,
  DeployResult,
  ErrorObject,
  FiguresSummary,
  HarnessDetail,
  HarnessFigures,
  HarnessSummary,
  HistoryPage,
  RetainedImages,
  RollbackRequest,
  UndeployedHarness,
  WhoAmI,
} from './types.js';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorObject,
    /** The answer's `WWW-Authenticate` (a 401's or 403's): where to sign in, or the scope it lacked. */
    readonly challenge?: string,
  ) {
    super(body.message);
  }

  get code(): string {
    return this.body.code;
  }
}

/** Whether `e` means the daemon wants a (different) token. */
export function isUnauthorized(e: unknown): boolean {
  return e instanceof ApiError && e.status === 401;
}

async function send(method: string, path: string, body?: Blob | string): Promise<Response> {
  let response: Response;
  const type: Record<string, string> = typeof body === 'string' ? { 'content-type': 'application/json' } : {};
  try {
    response = await fetch(path, { method, body, headers: { accept: 'application/json', ...type, ...authHeaders() } });
  } catch (e) {
    throw new ApiError(0, { code: 'daemon-unreachable', message: `bermd could not be reached (${(e as Error).message})` });
  }
  if (response.ok) return response;
  const text = await response.text();
  let error: ErrorObject | undefined;
  try {
    error = (JSON.parse(text) as { error?: ErrorObject }).error;
  } catch {
    // not a bermd error body
  }
  throw new ApiError(
    response.status,
    error ?? { code: 'unexpected-response', message: `${method} ${path} answered ${response.status}` },
    response.headers.get('www-authenticate') ?? undefined,
  );
}

/** Who the request's token names, and its scopes. */
export async function whoami(): Promise<WhoAmI> {
  return (await send('GET', '/whoami')).json() as Promise<WhoAmI>;
}

export async function listHarnesses(): Promise<HarnessSummary[]> {
  return (await send('GET', '/harnesses')).json() as Promise<HarnessSummary[]>;
}

export async function getHarness(name: string): Promise<HarnessDetail> {
  return (await send('GET', `/harnesses/${encodeURIComponent(name)}`)).json() as Promise<HarnessDetail>;
}

/** Deploys (or with `dryRun`, checks) `image` as `name`; the query is the one the client and `crab deploy` send. */
export async function deploy(name: string, image: Blob, options: DeployOptions = {}): Promise<DeployResult> {
  const response = await send('PUT', `/harnesses/${encodeURIComponent(name)}${encodeDeployQuery(options)}`, image);
  return { ...((await response.json()) as DeployResult), replaced: response.status === 200 };
}

export async function undeploy(name: string): Promise<void> {
  await send('DELETE', `/harnesses/${encodeURIComponent(name)}`);
}

/** A page of `name`'s history, newest first; `cursor` is the previous page's `next_cursor`. */
export async function history(name: string, cursor?: string, limit?: number): Promise<HistoryPage> {
  const query = new URLSearchParams();
  if (cursor !== undefined) query.set('cursor', cursor);
  if (limit !== undefined) query.set('limit', String(limit));
  const q = query.toString() === '' ? '' : `?${query}`;
  return (await send('GET', `/harnesses/${encodeURIComponent(name)}/history${q}`)).json() as Promise<HistoryPage>;
}

/** What a rollback of `name` can go back to. */
export async function retainedImages(name: string): Promise<RetainedImages> {
  return (await send('GET', `/harnesses/${encodeURIComponent(name)}/images`)).json() as Promise<RetainedImages>;
}

/** Rolls `name` back (or with `dryRun`, checks it); an empty request is one step back, or an undeploy undone. */
export async function rollback(
  name: string,
  request: RollbackRequest,
  options: { dryRun?: boolean; force?: boolean } = {},
): Promise<DeployResult> {
  const query = new URLSearchParams();
  if (options.force === true) query.set('force', 'true');
  if (options.dryRun === true) query.set('dry-run', 'true');
  const q = query.toString() === '' ? '' : `?${query}`;
  const body = Object.keys(request).length > 0 ? JSON.stringify(request) : undefined;
  const response = await send('POST', `/harnesses/${encodeURIComponent(name)}/rollback${q}`, body);
  return { ...((await response.json()) as DeployResult), replaced: response.status === 200 };
}

/** Names undeployed lately, newest first, each with the image a rollback would bring back. */
export async function listUndeployed(): Promise<UndeployedHarness[]> {
  return ((await (await send('GET', '/undeployed')).json()) as { harnesses: UndeployedHarness[] }).harnesses;
}

/** Each deployed harness's calls and failures per minute over the last hour. */
export async function figuresSummary(): Promise<FiguresSummary> {
  return (await send('GET', '/figures')).json() as Promise<FiguresSummary>;
}

/** `name`'s live figures per tool: the last minute, since start, the hour. */
export async function harnessFigures(name: string): Promise<HarnessFigures> {
  return (await send('GET', `/harnesses/${encodeURIComponent(name)}/figures`)).json() as Promise<HarnessFigures>;
}
