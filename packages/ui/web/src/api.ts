/** The control API over fetch: the same requests curl makes, with the token as a header. */
import { authHeaders } from './token.js';
import type { DeployAnswer, ErrorBody, HarnessDetail, HarnessSummary } from './types.js';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
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

async function send(method: string, path: string, body?: Blob): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(path, { method, body, headers: { accept: 'application/json', ...authHeaders() } });
  } catch (e) {
    throw new ApiError(0, { code: 'daemon-unreachable', message: `bermd could not be reached (${(e as Error).message})` });
  }
  if (response.ok) return response;
  const text = await response.text();
  let error: ErrorBody | undefined;
  try {
    error = (JSON.parse(text) as { error?: ErrorBody }).error;
  } catch {
    // not a bermd error body
  }
  throw new ApiError(response.status, error ?? { code: 'unexpected-response', message: `${method} ${path} answered ${response.status}` });
}

export async function listHarnesses(): Promise<HarnessSummary[]> {
  return (await send('GET', '/harnesses')).json() as Promise<HarnessSummary[]>;
}

export async function getHarness(name: string): Promise<HarnessDetail> {
  return (await send('GET', `/harnesses/${encodeURIComponent(name)}`)).json() as Promise<HarnessDetail>;
}

export interface DeployRequest {
  force?: boolean;
  dryRun?: boolean;
  /** `timeout`, `max_memory`, `max_result_size` as the operator typed them. */
  limits?: Record<string, string>;
  grants?: string[];
}

export interface Deployed {
  /** 201: new; 200: replaced (for a dry run: what the deploy would be). */
  replaced: boolean;
  answer: DeployAnswer;
}

export async function deploy(name: string, image: Blob, request: DeployRequest = {}): Promise<Deployed> {
  const query = new URLSearchParams();
  if (request.force) query.set('force', 'true');
  if (request.dryRun) query.set('dry-run', 'true');
  for (const [key, value] of Object.entries(request.limits ?? {})) if (value !== '') query.set(key, value);
  for (const grant of request.grants ?? []) query.append('grant', grant);
  const qs = query.toString();
  const response = await send('PUT', `/harnesses/${encodeURIComponent(name)}${qs === '' ? '' : `?${qs}`}`, image);
  return { replaced: response.status === 200, answer: (await response.json()) as DeployAnswer };
}

export async function undeploy(name: string): Promise<void> {
  await send('DELETE', `/harnesses/${encodeURIComponent(name)}`);
}
