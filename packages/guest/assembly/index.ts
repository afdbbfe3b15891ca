// What a harness imports: `import { call, log, emit, fetch, content, progress, elicit, sample } from "@berm/guest"`.
import { JSON } from 'json-as';
import { takeAnswer } from './abi';
import {
  berm_call,
  berm_elicit,
  berm_emit,
  berm_http_fetch,
  berm_idempotency_key,
  berm_log,
  berm_progress,
  berm_resource_updated,
  berm_sample,
} from './host';

export { Content, content } from './content';
export { Messages, Role } from './messages';

export {
  berm_alloc,
  __berm_args,
  __berm_no_args,
  __berm_ok,
  __berm_ok_void,
  __berm_abort_result,
  __berm_prompt_args,
  __berm_prompt_answer,
} from './abi';
export {
  __berm_read_request,
  __berm_read_variables,
  __berm_read_answer,
  __berm_read_unknown,
  __berm_complete_request,
  __berm_complete_answer,
} from './surface';

/** How a host call ended (docs/contract.md §4). */
export enum Outcome {
  /** It ran and answered. */
  Ok = 0,
  /** Nothing ran: the host refused the request (not declared, not deployed, not granted, bad request). */
  Refused = 1,
  /** It ran and failed. */
  Failed = 2,
}

/** How a host call ended, and the host's message when it did not succeed. */
export class HostResult {
  constructor(
    /** Ok, Refused or Failed. */
    public outcome: Outcome,
    /** With Refused or Failed, the host's message; otherwise "". */
    public message: string,
  ) {}

  get ok(): bool {
    return this.outcome == Outcome.Ok;
  }

  get refused(): bool {
    return this.outcome == Outcome.Refused;
  }

  get failed(): bool {
    return this.outcome == Outcome.Failed;
  }
}

/** A host call's answer: the envelope {"ok": value}, {"refused": message} or {"failed": message}. */
export class Answer extends HostResult {
  constructor(
    outcome: Outcome,
    /** With Ok, the value as JSON text; otherwise "". */
    public json: string,
    message: string,
  ) {
    super(outcome, message);
  }

  /** The value parsed as T. Throws (the tool answers an error) when the call did not succeed. */
  value<T>(): T {
    if (this.outcome != Outcome.Ok) throw new Error(this.message);
    return JSON.parse<T>(this.json);
  }
}

function isSpace(c: i32): bool {
  return c == 0x20 || c == 0x09 || c == 0x0a || c == 0x0d;
}

/**
 * A host call's answer text as an Answer. Read by hand rather than with JSON.parse<JSON.Obj>: the
 * envelope is one member whose value is kept as text, and json-as's dynamic object brings its whole
 * generic (de)serialiser into every harness that logs (measured: +30 KB of wasm and several seconds
 * of optimisation per build).
 */
function readAnswer(text: string): Answer {
  let start = 0;
  let end = text.length;
  while (start < end && isSpace(text.charCodeAt(start))) start++;
  while (end > start && isSpace(text.charCodeAt(end - 1))) end--;
  if (start < end && text.charCodeAt(start) == 0x7b && text.charCodeAt(end - 1) == 0x7d) {
    const body = text.substring(start + 1, end - 1);
    const colon = body.indexOf(':');
    if (colon > 0) {
      const key = body.substring(0, colon).trim();
      const value = body.substring(colon + 1).trim();
      if (key == '"ok"') return new Answer(Outcome.Ok, value, '');
      if (key == '"refused"') return new Answer(Outcome.Refused, '', JSON.parse<string>(value));
      if (key == '"failed"') return new Answer(Outcome.Failed, '', JSON.parse<string>(value));
    }
  }
  throw new Error('the host answered something that is not an envelope: ' + text);
}

// One function per host call, never one that switches between them: AssemblyScript imports what is
// reachable, and a harness must import berm.http.fetch only when it fetches (the deploy checks refuse
// an undeclared import, and the build refuses a declared syscall the code never makes).

function sendCall(request: string): Answer {
  const bytes = String.UTF8.encode(request);
  return readAnswer(takeAnswer(berm_call(changetype<usize>(bytes), bytes.byteLength)));
}

function sendLog(request: string): Answer {
  const bytes = String.UTF8.encode(request);
  return readAnswer(takeAnswer(berm_log(changetype<usize>(bytes), bytes.byteLength)));
}

function sendResourceUpdated(request: string): Answer {
  const bytes = String.UTF8.encode(request);
  return readAnswer(takeAnswer(berm_resource_updated(changetype<usize>(bytes), bytes.byteLength)));
}

function sendEmit(request: string): Answer {
  const bytes = String.UTF8.encode(request);
  return readAnswer(takeAnswer(berm_emit(changetype<usize>(bytes), bytes.byteLength)));
}

function sendIdempotencyKey(): Answer {
  const bytes = String.UTF8.encode('{}');
  return readAnswer(takeAnswer(berm_idempotency_key(changetype<usize>(bytes), bytes.byteLength)));
}

function sendFetch(request: string): Answer {
  const bytes = String.UTF8.encode(request);
  return readAnswer(takeAnswer(berm_http_fetch(changetype<usize>(bytes), bytes.byteLength)));
}

function sendProgress(request: string): Answer {
  const bytes = String.UTF8.encode(request);
  return readAnswer(takeAnswer(berm_progress(changetype<usize>(bytes), bytes.byteLength)));
}

function sendElicit(request: string): Answer {
  const bytes = String.UTF8.encode(request);
  return readAnswer(takeAnswer(berm_elicit(changetype<usize>(bytes), bytes.byteLength)));
}

function sendSample(request: string): Answer {
  const bytes = String.UTF8.encode(request);
  return readAnswer(takeAnswer(berm_sample(changetype<usize>(bytes), bytes.byteLength)));
}

/**
 * Calls `tool` of the deployed program `program` (this program itself, or one declared in
 * package.json's berm.deps.programs) with `args`, any value json-as serialises to an object.
 * The answer tells Refused (nothing ran: not declared, not deployed, no such tool, arguments that
 * do not fit) from Failed (the tool ran and answered an error); with Ok, `value<T>()` is its result.
 */
export function call<A>(program: string, tool: string, args: A): Answer {
  const request =
    '{"program":' +
    JSON.stringify<string>(program) +
    ',"tool":' +
    JSON.stringify<string>(tool) +
    ',"args":' +
    JSON.stringify<A>(args) +
    '}';
  return sendCall(request);
}

/**
 * The idempotency key of this call (docs/contract.md §6): the client's for a call of an `@effect
 * external_write` tool, or one bermd made for it; a key derived from the caller's for a tool reached by
 * `call` from such a tool. Null when the call has none (a query called on its own, `crab run`). A tool
 * that writes upstream sends it there (a header `Idempotency-Key`, or `{idempotency-key}` in a header
 * value, which the host fills in), so that the upstream writes once per key; a reconcile tool asks the
 * upstream with it whether the write happened.
 */
export function idempotencyKey(): string | null {
  const answer = sendIdempotencyKey();
  if (!answer.ok) throw new Error('the host refused berm.idempotency_key: ' + answer.message);
  if (answer.json == 'null') return null;
  return JSON.parse<string>(answer.json);
}

/** Writes a line to the host's log at `level` (trace, debug, info, notice, warn, error, ...). False when the host refused it. */
export function log(message: string, level: string = 'info'): bool {
  return sendLog('{"level":' + JSON.stringify<string>(level) + ',"message":' + JSON.stringify<string>(message) + '}').ok;
}

/**
 * Tells the clients subscribed to this program's resource at `path` (a declared path, or one a declared
 * template matches) that it changed. Needs `"berm.resource_updated": []` in package.json's
 * berm.deps.syscalls. False when the host refused it (a path the program does not declare).
 */
export function resourceUpdated(path: string): bool {
  return sendResourceUpdated('{"path":' + JSON.stringify<string>(path) + '}').ok;
}

/** Event names: the class name in snake_case, `RainStarted` → `rain_started`, `HTTPError` → `http_error`. */
export function eventName(className: string): string {
  let out = '';
  const n = className.length;
  for (let i = 0; i < n; i++) {
    const c = className.charCodeAt(i);
    const upper = c >= 65 && c <= 90;
    if (upper && i > 0) {
      const prev = className.charCodeAt(i - 1);
      const prevLowerOrDigit = (prev >= 97 && prev <= 122) || (prev >= 48 && prev <= 57);
      const prevUpper = prev >= 65 && prev <= 90;
      const next = i + 1 < n ? className.charCodeAt(i + 1) : 0;
      const nextLower = next >= 97 && next <= 122;
      if (prevLowerOrDigit || (prevUpper && nextLower)) out += '_';
    }
    out += upper ? String.fromCharCode(c + 32) : String.fromCharCode(c);
  }
  return out;
}

/**
 * Emits `event`, an instance of an `@event` class, as the event named after its class in snake_case.
 * False when the host refused it (fields that do not match the declared schema, the call's budget spent).
 */
export function emit<T>(event: T): bool {
  const request = '{"event":' + JSON.stringify<string>(eventName(nameof<T>())) + ',"fields":' + JSON.stringify<T>(event) + '}';
  return sendEmit(request).ok;
}

/** What to send: `fetch(url, new RequestInit("POST").header("content-type", "application/json").text(body))`. */
@json
export class RequestInit {
  method: string = 'GET';
  headers: Map<string, string> = new Map<string, string>();
  @omitnull()
  body: string | null = null;
  /** True when `body` is base64 of bytes that are not text. */
  body_base64: bool = false;

  constructor(method: string = 'GET') {
    this.method = method;
  }

  /** Sets header `name`; `{secret:NAME}` in a value is replaced by the host with the secret NAME, which the guest never sees. */
  header(name: string, value: string): RequestInit {
    this.headers.set(name, value);
    return this;
  }

  /** Sets the body to UTF-8 text. */
  text(body: string): RequestInit {
    this.body = body;
    this.body_base64 = false;
    return this;
  }
}

@json
class FetchRequest {
  method: string = 'GET';
  url: string = '';
  headers: Map<string, string> = new Map<string, string>();
  @omitnull()
  body: string | null = null;
  body_base64: bool = false;
}

/** An HTTP answer: a 4xx or 5xx is an answer too, not a failure. */
@json
export class Response {
  status: i32 = 0;
  /** Lowercased names; a repeated header is a JSON array of its values. */
  headers: JSON.Obj = new JSON.Obj();
  body: string = '';
  /** True when `body` is base64 (the bytes were not UTF-8). */
  body_base64: bool = false;
  /** True when the body was longer than the host's limit and was cut there. */
  truncated: bool = false;

  /** Header `name` (lowercase), its values joined by ", " when repeated; null when absent. */
  header(name: string): string | null {
    const value = this.headers.get(name);
    if (value === null) return null;
    // Through its JSON text: json-as's JSON.Value has no safe view of an array of strings.
    const text = JSON.stringify<JSON.Value>(value);
    if (text.startsWith('"')) return JSON.parse<string>(text);
    return JSON.parse<string[]>(text).join(', ');
  }

  /** The body parsed as JSON of type T. */
  json<T>(): T {
    return JSON.parse<T>(this.body);
  }
}

/** The answer of `fetch`: Ok with a response, Refused (nothing was sent) or Failed (sent or attempted, and failed). */
export class FetchResult extends HostResult {
  constructor(
    outcome: Outcome,
    public response: Response | null,
    message: string,
  ) {
    super(outcome, message);
  }

  /** The response. Throws (the tool answers an error) when there is none. */
  get(): Response {
    const response = this.response;
    if (response === null) throw new Error(this.message);
    return response;
  }
}

/**
 * Sends an HTTP request through the syscall berm.http.fetch, which package.json must declare with the
 * hosts it reaches (berm.deps.syscalls). Secrets go in header values as `{secret:NAME}` and must be
 * declared in berm.deps.secrets; the host substitutes them and the guest never holds a value.
 */
export function fetch(url: string, init: RequestInit | null = null): FetchResult {
  const request = new FetchRequest();
  request.url = url;
  if (init !== null) {
    request.method = init.method;
    request.headers = init.headers;
    request.body = init.body;
    request.body_base64 = init.body_base64;
  }
  const answer = sendFetch(JSON.stringify<FetchRequest>(request));
  if (!answer.ok) return new FetchResult(answer.outcome, null, answer.message);
  return new FetchResult(Outcome.Ok, JSON.parse<Response>(answer.json), '');
}

/**
 * Tells the client how far the call has come: `done` of `total` (left out when NaN), with `message`
 * (left out when empty). Sent to a client that asked for progress, dropped otherwise. False when the
 * host refused it: `done` below the previous report, or too many reports in one call.
 */
export function progress(done: f64, total: f64 = NaN, message: string = ''): bool {
  let request = '{"progress":' + JSON.stringify<f64>(done);
  if (!isNaN(total)) request += ',"total":' + JSON.stringify<f64>(total);
  if (message.length > 0) request += ',"message":' + JSON.stringify<string>(message);
  return sendProgress(request + '}').ok;
}

/** The answer's shape, read with json-as; `content` kept as its JSON text. */
@json
class ElicitAnswer {
  action: string = '';
  @omitnull()
  content: JSON.Raw | null = null;
}

/** What the user answered an `elicit`: Ok with `action` and `contentJson`, or Refused (nothing was asked). */
export class Elicitation extends HostResult {
  constructor(
    outcome: Outcome,
    /** With Ok: "accept", "decline" or "cancel"; otherwise "". */
    public action: string,
    /** With an accepted answer, the content as JSON text (an object of the requested schema's fields); otherwise "". */
    public contentJson: string,
    message: string,
  ) {
    super(outcome, message);
  }

  /** True when the user accepted and answered the form. */
  get accepted(): bool {
    return this.outcome == Outcome.Ok && this.action == 'accept';
  }

  /** The content parsed as T (a @json class of the requested fields). Throws (the tool answers an error) when there is none. */
  content<T>(): T {
    if (this.contentJson.length == 0) throw new Error(this.outcome == Outcome.Ok ? 'the user answered ' + this.action + ', with no content' : this.message);
    return JSON.parse<T>(this.contentJson);
  }
}

/**
 * Asks the user of the client that made the call to fill in a form: MCP's `elicitation/create`, with
 * `message` and `requestedSchema`, the form's JSON Schema as text (a flat object of primitive
 * properties). Makes the syscall berm.elicit, which the build declares. Refused when the client cannot
 * be asked (no elicitation capability, a call not made over MCP, no answer within the time limit).
 */
export function elicit(message: string, requestedSchemaJson: string): Elicitation {
  const answer = sendElicit('{"message":' + JSON.stringify<string>(message) + ',"requestedSchema":' + requestedSchemaJson + '}');
  if (!answer.ok) return new Elicitation(answer.outcome, '', '', answer.message);
  const parsed = JSON.parse<ElicitAnswer>(answer.json);
  const raw = parsed.content;
  return new Elicitation(Outcome.Ok, parsed.action, raw === null ? '' : raw.toString(), '');
}

/**
 * Asks the model of the client that made the call: MCP's `sampling/createMessage`, whose params
 * (`messages`, `maxTokens`, `systemPrompt`, ...) `paramsJson` holds as JSON text. Ok with the
 * CreateMessageResult (`value<T>()`, `json`); Refused as `elicit` is. Makes the syscall berm.sample,
 * which the build declares.
 */
export function sample(paramsJson: string): Answer {
  return sendSample(paramsJson);
}
