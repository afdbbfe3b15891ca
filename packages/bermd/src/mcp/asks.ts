/**
 * A call's `berm.elicit` and `berm.sample` (runtime/ask.ts) put to the client that made the call, in the
 * way each MCP generation has for it:
 *
 * - 2025 sessions: a server-to-client request related to the call (`elicitation/create`,
 *   `sampling/createMessage`) on the call's own stream; the guest's worker waits for the answer.
 * - 2026-07-28: no request can reach the client while a call is under way, so the call answers
 *   `input_required` with the question embedded, and stops. The client asks its user (or model) and calls
 *   again with the answer; the guest runs again from the start and is handed the answers so far, in the
 *   order it asked, from the request (`inputResponses`) and from the state the previous round minted
 *   (`requestState`: the answers of earlier rounds, each beside a digest of the question it answers).
 *   A guest asking something other than what was answered at that place is asked again from there.
 */
import { createHash } from 'node:crypto';
import {
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  type InputRequiredResult,
  inputRequired,
  type InputRequest,
} from '@modelcontextprotocol/server';
import { SYSCALL } from '@berm/protocol';
import { type AskRequest, type CallAsk, type HostEnvelope, isPlainObject, Stop } from '../runtime/index.js';

/** What each asking syscall sends, and the capability a client declares to be asked it. */
const ASKS: Readonly<Record<string, { method: 'elicitation/create' | 'sampling/createMessage'; capability: 'elicitation' | 'sampling' }>> =
  {
    [SYSCALL.elicit]: { method: 'elicitation/create', capability: 'elicitation' },
    [SYSCALL.sample]: { method: 'sampling/createMessage', capability: 'sampling' },
  };

/** The longest a request to the client is left to the SDK's own timer: the call's limit governs it, through the ask's signal. */
const NO_SDK_TIMEOUT_MS = 2_147_483_647;

/** Why `request` is not what `name` sends; undefined when it is. */
function requestProblem(name: string, request: unknown): string | undefined {
  if (name === SYSCALL.elicit) {
    if (isPlainObject(request) && typeof request.message === 'string' && isPlainObject(request.requestedSchema)) return undefined;
    return 'a berm.elicit request is {"message": string, "requestedSchema": object}';
  }
  if (isPlainObject(request) && Array.isArray(request.messages) && typeof request.maxTokens === 'number') return undefined;
  return 'a berm.sample request is sampling/createMessage\'s params: {"messages": [...], "maxTokens": number, ...}';
}

/** A refusal when the client cannot be asked `name` (no declared capability) or the request is malformed; undefined otherwise. */
function refusal(ask: AskRequest, capabilities: ClientCapabilities | undefined): HostEnvelope | undefined {
  const problem = requestProblem(ask.name, ask.request);
  if (problem !== undefined) return { refused: problem };
  const { capability } = ASKS[ask.name]!;
  if (capabilities?.[capability] === undefined)
    return { refused: `${ask.name}: the client did not declare the ${capability} capability, so it cannot be asked; nothing was asked` };
  return undefined;
}

/** Sends a request related to the call being handled (the SDK's `ctx.mcpReq.send`). */
export type RelatedSend = (
  request: { method: string; params: Record<string, unknown> },
  options: { signal: AbortSignal; timeout: number },
) => Promise<unknown>;

/** A 2025 session's asks: each a request to the client related to the call, answered in place. */
export function sessionAsk(capabilities: () => ClientCapabilities | undefined, send: RelatedSend): CallAsk {
  return async (ask) => {
    const refused = refusal(ask, capabilities());
    if (refused !== undefined) return refused;
    const { method } = ASKS[ask.name]!;
    const result = await send(
      { method, params: ask.request as Record<string, unknown> },
      { signal: ask.signal, timeout: NO_SDK_TIMEOUT_MS },
    );
    return { ok: result };
  };
}

/** One answered question of an earlier round, as `requestState` carries it. */
interface Answered {
  /** The digest of the question (the syscall's name and its request). */
  d: string;
  /** The client's answer. */
  r: unknown;
}

const STATE_VERSION = 1;

function digestOf(ask: AskRequest): string {
  return createHash('sha256').update(ask.name).update('\0').update(JSON.stringify(ask.request)).digest('base64url');
}

function inputKey(index: number): string {
  return `berm-${index}`;
}

/** The answers `state` carries; none when it is absent or not one bermd minted (it comes from the client: nothing in it is trusted beyond what the client could answer anyway). */
function decodeState(state: unknown): Array<{ d: string; r?: unknown }> {
  if (typeof state !== 'string') return [];
  try {
    const value: unknown = JSON.parse(Buffer.from(state, 'base64url').toString('utf8'));
    if (!isPlainObject(value) || value.v !== STATE_VERSION || !Array.isArray(value.a)) return [];
    return value.a.filter((a): a is { d: string; r?: unknown } => isPlainObject(a) && typeof a.d === 'string');
  } catch {
    return [];
  }
}

/**
 * A 2026-07-28 call's asks over its rounds. `stop` is given to the call as its signal beside the
 * request's: a question without an answer stops the guest, and `result` is then what the call answers.
 */
export class InputRounds {
  readonly stop = new Stop();
  private readonly answers: Array<Answered | { d: string; r?: undefined }>;
  private pending?: { key: string; request: InputRequest; digest: string; index: number };
  private asked = 0;

  constructor(
    private readonly capabilities: ClientCapabilities | undefined,
    state: unknown,
    responses: Record<string, unknown> | undefined,
  ) {
    this.answers = decodeState(state).map((a, index) => {
      if (a.r !== undefined) return a;
      const r = responses?.[inputKey(index)];
      return r === undefined ? { d: a.d } : { d: a.d, r };
    });
  }

  /** The request's client capabilities, from a 2026-07-28 request's envelope. */
  static capabilitiesOf(envelope: unknown): ClientCapabilities | undefined {
    const caps = isPlainObject(envelope) ? envelope[CLIENT_CAPABILITIES_META_KEY] : undefined;
    return isPlainObject(caps) ? (caps as ClientCapabilities) : undefined;
  }

  readonly ask: CallAsk = async (ask) => {
    const refused = refusal(ask, this.capabilities);
    if (refused !== undefined) return refused;
    const index = this.asked++;
    const digest = digestOf(ask);
    const known = this.answers[index];
    if (known !== undefined && known.d === digest && known.r !== undefined) return { ok: known.r };
    // Not answered (or answered for another question): ask it, and stop the guest until the client answers.
    const params = ask.request as Record<string, unknown>;
    const request =
      ask.name === SYSCALL.elicit
        ? inputRequired.elicit(params as unknown as Parameters<typeof inputRequired.elicit>[0])
        : inputRequired.createMessage(params as unknown as Parameters<typeof inputRequired.createMessage>[0]);
    this.pending = { key: inputKey(index), request, digest, index };
    this.stop.abort();
    return { refused: `${ask.name}: the client is being asked; the call runs again from the start with its answer` };
  };

  /** The `input_required` result the call answers when a question is pending; undefined when none is. */
  result(): InputRequiredResult | undefined {
    const pending = this.pending;
    if (pending === undefined) return undefined;
    const carried: Array<{ d: string; r?: unknown }> = this.answers.slice(0, pending.index).map((a) => ({ d: a.d, r: a.r }));
    carried.push({ d: pending.digest });
    const requestState = Buffer.from(JSON.stringify({ v: STATE_VERSION, a: carried }), 'utf8').toString('base64url');
    return inputRequired({ inputRequests: { [pending.key]: pending.request }, requestState });
  }
}
