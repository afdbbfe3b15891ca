// Guests that exercise the tool runtime, written in WAT against the guest ABI (spec §4).
// Both modules share one prelude: constants below address 1024, a bump `berm_alloc` above it that grows
// memory as it goes and traps when it cannot, and `$put`, which appends bytes to the value being built
// (a builder is just consecutive allocations, which a bump allocator keeps contiguous).
import type { JsonSchema, ManifestData } from '@berm/manifest';
import { buildImage, sampleManifest } from './wat.js';

/** WAT string literal for `data` (text is UTF-8 encoded): quotes, backslashes and non-ASCII bytes escaped. */
function watString(data: string | Uint8Array): string {
  let out = '';
  for (const byte of typeof data === 'string' ? new TextEncoder().encode(data) : data) {
    const c = String.fromCharCode(byte);
    out += byte >= 0x20 && byte < 0x7f && c !== '"' && c !== '\\' ? c : `\\${byte.toString(16).padStart(2, '0')}`;
  }
  return `"${out}"`;
}

/** Constant strings laid out from address 16; each name becomes `$<name>_at` / `$<name>_len` globals. */
function constants(strings: Record<string, string | Uint8Array>): string {
  let at = 16;
  const out: string[] = [];
  for (const [name, data] of Object.entries(strings)) {
    const len = typeof data === 'string' ? new TextEncoder().encode(data).length : data.length;
    out.push(`(data (i32.const ${at}) ${watString(data)})`);
    out.push(`(global $${name}_at i32 (i32.const ${at})) (global $${name}_len i32 (i32.const ${len}))`);
    at += len + 1;
  }
  if (at > 1024) throw new Error('guest constants overflow the 1 KiB reserved for them');
  return out.join('\n  ');
}

function prelude(memory: string, strings: Record<string, string | Uint8Array>): string {
  return `
  (memory (export "memory") ${memory})
  (global $next (mut i32) (i32.const 1024))
  ${constants({ ok_open: '{"ok":', close: '}', ...strings })}

  (func $alloc (export "berm_alloc") (param $len i32) (result i32)
    (local $ptr i32) (local $end i32) (local $have i32)
    (local.set $ptr (global.get $next))
    (local.set $end (i32.add (local.get $ptr) (local.get $len)))
    (local.set $have (i32.mul (memory.size) (i32.const 65536)))
    (if (i32.gt_u (local.get $end) (local.get $have))
      (then
        (if (i32.eq (memory.grow (i32.add (i32.shr_u (i32.sub (local.get $end) (local.get $have)) (i32.const 16)) (i32.const 1)))
                    (i32.const -1))
          (then unreachable))))
    (global.set $next (local.get $end))
    (local.get $ptr))

  (func $pack (param $ptr i32) (param $len i32) (result i64)
    (i64.or (i64.shl (i64.extend_i32_u (local.get $ptr)) (i64.const 32)) (i64.extend_i32_u (local.get $len))))
  (func $ptr_of (param $packed i64) (result i32) (i32.wrap_i64 (i64.shr_u (local.get $packed) (i64.const 32))))
  (func $len_of (param $packed i64) (result i32) (i32.wrap_i64 (local.get $packed)))

  (func $put (param $src i32) (param $len i32)
    (memory.copy (call $alloc (local.get $len)) (local.get $src) (local.get $len)))
  (func $put_const (param $at i32) (param $len i32) (call $put (local.get $at) (local.get $len)))
  ;; the bytes appended since $start, packed as a result
  (func $since (param $start i32) (result i64)
    (call $pack (local.get $start) (i32.sub (global.get $next) (local.get $start))))
  ;; {"ok": <bytes>}
  (func $ok_wrap (param $src i32) (param $len i32) (result i64) (local $start i32)
    (local.set $start (global.get $next))
    (call $put_const (global.get $ok_open_at) (global.get $ok_open_len))
    (call $put (local.get $src) (local.get $len))
    (call $put_const (global.get $close_at) (global.get $close_len))
    (call $since (local.get $start)))
  ;; appends the decimal digits of $n
  (func $put_u32 (param $n i32) (local $digits i32) (local $m i32) (local $p i32)
    (local.set $digits (i32.const 1))
    (local.set $m (local.get $n))
    (block $counted
      (loop $count
        (br_if $counted (i32.lt_u (local.get $m) (i32.const 10)))
        (local.set $m (i32.div_u (local.get $m) (i32.const 10)))
        (local.set $digits (i32.add (local.get $digits) (i32.const 1)))
        (br $count)))
    (local.set $p (i32.add (call $alloc (local.get $digits)) (local.get $digits)))
    (loop $write
      (local.set $p (i32.sub (local.get $p) (i32.const 1)))
      (i32.store8 (local.get $p) (i32.add (i32.const 48) (i32.rem_u (local.get $n) (i32.const 10))))
      (local.set $n (i32.div_u (local.get $n) (i32.const 10)))
      (br_if $write (i32.ne (local.get $n) (i32.const 0)))))`;
}

/** Length of the string `huge` answers: past the runtime's default 1 MiB result limit, under 2 MiB. */
export const HUGE_RESULT_CHARS = 1536 * 1024;
export const FAIL_MESSAGE = 'the tool failed on purpose';

export interface BasicOptions {
  /** Initial memory pages (default 1). */
  initialPages?: number;
  /** A declared maximum in pages; none by default, so only the runtime's cap bounds growth. */
  maxPages?: number;
}

/**
 * A guest with no imports, one tool per way a call can end:
 * - `echo`: `{"ok": <its arguments>}`
 * - `fail`: `{"error": FAIL_MESSAGE}`
 * - `trap`: executes `unreachable`
 * - `grow`: grows memory a page at a time until `memory.grow` answers -1, then `{"ok": {"pages": <memory.size>}}`
 * - `huge`: `{"ok": "xxx…"}` with HUGE_RESULT_CHARS x's
 * - `raw`: answers its arguments' bytes as its whole result, so a test chooses the envelope
 * - `garbage`: bytes that are not UTF-8
 * - `wild`: a result pointer far outside its memory
 */
export function basicWat(options: BasicOptions = {}): string {
  const memory = `${options.initialPages ?? 1}${options.maxPages === undefined ? '' : ` ${options.maxPages}`}`;
  return `(module${prelude(memory, {
    fail: JSON.stringify({ error: FAIL_MESSAGE }),
    pages_open: '{"ok":{"pages":',
    pages_close: '}}',
    huge_open: '{"ok":"',
    huge_close: '"}',
    garbage: Uint8Array.from([0xff, 0xfe, ...new TextEncoder().encode(' not json')]),
  })}

  (func (export "berm_tool_echo") (param $ptr i32) (param $len i32) (result i64)
    (call $ok_wrap (local.get $ptr) (local.get $len)))

  (func (export "berm_tool_fail") (param i32 i32) (result i64)
    (call $pack (global.get $fail_at) (global.get $fail_len)))

  (func (export "berm_tool_trap") (param i32 i32) (result i64)
    unreachable)

  (func (export "berm_tool_grow") (param i32 i32) (result i64) (local $start i32)
    (block $full
      (loop $more
        (br_if $full (i32.eq (memory.grow (i32.const 1)) (i32.const -1)))
        (br $more)))
    (local.set $start (global.get $next))
    (call $put_const (global.get $pages_open_at) (global.get $pages_open_len))
    (call $put_u32 (memory.size))
    (call $put_const (global.get $pages_close_at) (global.get $pages_close_len))
    (call $since (local.get $start)))

  (func (export "berm_tool_huge") (param i32 i32) (result i64) (local $start i32)
    (local.set $start (global.get $next))
    (call $put_const (global.get $huge_open_at) (global.get $huge_open_len))
    (memory.fill (call $alloc (i32.const ${HUGE_RESULT_CHARS})) (i32.const 120) (i32.const ${HUGE_RESULT_CHARS}))
    (call $put_const (global.get $huge_close_at) (global.get $huge_close_len))
    (call $since (local.get $start)))

  (func (export "berm_tool_raw") (param $ptr i32) (param $len i32) (result i64)
    (call $pack (local.get $ptr) (local.get $len)))

  (func (export "berm_tool_garbage") (param i32 i32) (result i64)
    (call $pack (global.get $garbage_at) (global.get $garbage_len)))

  (func (export "berm_tool_wild") (param i32 i32) (result i64)
    (call $pack (i32.const 0xffff0000) (i32.const 16)))
)`;
}

const anyObject = { type: 'object' };

function tool(name: string, description: string, args: JsonSchema = anyObject): ManifestData['tools'][number] {
  return { name, description, arguments: args };
}

export function basicManifest(): ManifestData {
  return sampleManifest({
    description: 'Ends a call in every way the runtime distinguishes',
    usage: '',
    tools: [
      tool('echo', 'Answers its arguments.'),
      tool('fail', 'Answers an error envelope.'),
      tool('trap', 'Traps.'),
      tool('grow', 'Grows memory until it cannot and reports the pages it has.'),
      tool('huge', 'Answers a string of 1.5 MiB.'),
      tool('raw', 'Answers its arguments as the whole envelope.'),
      tool('garbage', 'Answers bytes that are not UTF-8.'),
      tool('wild', 'Answers a pointer outside its memory.'),
    ],
  });
}

export const FORECAST_LOG = { level: 'info', message: 'forecast ran' };
export const SPIN_LOG = { level: 'info', message: 'spinning' };

/**
 * A guest that relays requests to the ABI's host calls, so tests drive nested calls, logs and events
 * from the arguments:
 * - `call` / `log` / `emit`: its arguments are the request to `berm.call` / `berm.log` / `berm.emit`;
 *   it answers `{"ok": <the host's envelope>}`
 * - `chain`: arguments `{"program": P}`; calls P's `chain` with the same arguments, and answers
 *   `{"ok": <the host's envelope>}`, so a chain of n successful levels nests n `ok`s around the refusal that ends it
 *   (the request is `{"tool":"chain","args":` + A + `,` + A without its `{`, which names the program from A)
 * - `log_twice`: its arguments are a `berm.log` request, made twice; answers `{"ok": <the second envelope>}`
 * - `forecast`: arguments `{"days": integer}`; logs FORECAST_LOG, then answers its arguments
 * - `spin`: logs SPIN_LOG, then loops forever
 */
export function relayWat(): string {
  return `(module
  (import "berm" "call" (func $host_call (param i32 i32) (result i64)))
  (import "berm" "log" (func $host_log (param i32 i32) (result i64)))
  (import "berm" "emit" (func $host_emit (param i32 i32) (result i64)))${prelude('1', {
    chain_open: '{"tool":"chain","args":',
    comma: ',',
    forecast_log: JSON.stringify(FORECAST_LOG),
    spin_log: JSON.stringify(SPIN_LOG),
  })}

  ;; the host's envelope as this tool's result: {"ok": <envelope>}
  (func $relay (param $envelope i64) (result i64)
    (call $ok_wrap (call $ptr_of (local.get $envelope)) (call $len_of (local.get $envelope))))

  (func (export "berm_tool_call") (param $ptr i32) (param $len i32) (result i64)
    (call $relay (call $host_call (local.get $ptr) (local.get $len))))
  (func (export "berm_tool_log") (param $ptr i32) (param $len i32) (result i64)
    (call $relay (call $host_log (local.get $ptr) (local.get $len))))
  (func (export "berm_tool_emit") (param $ptr i32) (param $len i32) (result i64)
    (call $relay (call $host_emit (local.get $ptr) (local.get $len))))

  (func (export "berm_tool_log_twice") (param $ptr i32) (param $len i32) (result i64)
    (drop (call $host_log (local.get $ptr) (local.get $len)))
    (call $relay (call $host_log (local.get $ptr) (local.get $len))))

  (func (export "berm_tool_chain") (param $ptr i32) (param $len i32) (result i64) (local $start i32)
    (local.set $start (global.get $next))
    (call $put_const (global.get $chain_open_at) (global.get $chain_open_len))
    (call $put (local.get $ptr) (local.get $len))
    (call $put_const (global.get $comma_at) (global.get $comma_len))
    (call $put (i32.add (local.get $ptr) (i32.const 1)) (i32.sub (local.get $len) (i32.const 1)))
    (call $relay (call $host_call (local.get $start) (i32.sub (global.get $next) (local.get $start)))))

  (func (export "berm_tool_forecast") (param $ptr i32) (param $len i32) (result i64)
    (drop (call $host_log (global.get $forecast_log_at) (global.get $forecast_log_len)))
    (call $ok_wrap (local.get $ptr) (local.get $len)))

  (func (export "berm_tool_spin") (param i32 i32) (result i64)
    (drop (call $host_log (global.get $spin_log_at) (global.get $spin_log_len)))
    (loop $forever (br $forever))
    (i64.const 0))
)`;
}

/** `programs`: the relay's `deps.programs`, the names its `berm.call` may reach besides its own. */
export function relayManifest(programs: string[] = []): ManifestData {
  return sampleManifest({
    description: 'Relays requests from its arguments to the host calls',
    usage: '',
    tools: [
      tool('call', 'Its arguments are a berm.call request.'),
      tool('log', 'Its arguments are a berm.log request.'),
      tool('emit', 'Its arguments are a berm.emit request.'),
      tool('log_twice', 'Its arguments are a berm.log request, made twice.'),
      tool('chain', 'Calls the chain tool of the program its arguments name.', {
        type: 'object',
        properties: { program: { type: 'string' } },
        required: ['program'],
      }),
      tool('forecast', 'Logs that it ran and answers its arguments.', {
        type: 'object',
        properties: { days: { type: 'integer', format: 'uint32', minimum: 0 } },
        required: ['days'],
      }),
      tool('spin', 'Logs, then never returns.'),
    ],
    events: [
      {
        name: 'reading',
        description: 'A temperature reading.',
        fields: { type: 'object', properties: { celsius: { type: 'number' } }, required: ['celsius'] },
      },
    ],
    deps: { programs, syscalls: {}, secrets: [] },
  });
}

export const FLOOD_LOG = { level: 'info', message: 'flooding the log' };
export const FLOOD_EVENT = { event: 'tick', fields: { n: 1 } };

/**
 * A guest that misbehaves in every way a caller must survive, each tool one way:
 * - `spin`: loops forever
 * - `hog`: grows its memory a page at a time until `memory.grow` is refused, then traps (`unreachable`), as an
 *   allocator that cannot get its next page gives up
 * - `recurse`: calls itself until the stack runs out
 * - `log_flood` / `emit_flood`: sends FLOOD_LOG / FLOOD_EVENT forever, whatever the host answers (and lets
 *   each answer go, so only the flood itself grows)
 * - `ping`: calls `peer`'s `ping` through `berm.call`; answers `{"ok": ...}` as it came back, and a refusal
 *   or failure `{"refused"|"failed": m}` as its own `{"error": m}`. Deployed as a and b, each the other's
 *   peer, a call of a's ping goes a→b→a→... until the host refuses at the depth limit.
 * (A result outside memory and one over the size limit are basicWat's `wild` and `huge`.)
 */
/** A tool that calls `host` with the constant `request` forever, letting each answer go so only the flood grows. */
function flood(tool: string, host: string, request: string): string {
  return `  (func (export "berm_tool_${tool}") (param i32 i32) (result i64) (local $mark i32)
    (local.set $mark (global.get $next))
    (loop $forever
      (drop (call ${host} (global.get $${request}_at) (global.get $${request}_len)))
      (global.set $next (local.get $mark))
      (br $forever))
    (i64.const 0))`;
}

export function hostileWat(peer: string): string {
  return `(module
  (import "berm" "call" (func $host_call (param i32 i32) (result i64)))
  (import "berm" "log" (func $host_log (param i32 i32) (result i64)))
  (import "berm" "emit" (func $host_emit (param i32 i32) (result i64)))${prelude('1', {
    flood_log: JSON.stringify(FLOOD_LOG),
    flood_event: JSON.stringify(FLOOD_EVENT),
    ping: JSON.stringify({ program: peer, tool: 'ping', args: {} }),
    error_open: '{"error"',
  })}

  (func (export "berm_tool_spin") (param i32 i32) (result i64)
    (loop $forever (br $forever))
    (i64.const 0))

  (func (export "berm_tool_hog") (param i32 i32) (result i64)
    (loop $more
      (br_if $more (i32.ne (memory.grow (i32.const 1)) (i32.const -1))))
    unreachable)

  (func $deeper (param $n i32) (result i32)
    (i32.add (call $deeper (i32.add (local.get $n) (i32.const 1))) (i32.const 1)))
  (func (export "berm_tool_recurse") (param i32 i32) (result i64)
    (drop (call $deeper (i32.const 0)))
    (i64.const 0))

${flood('log_flood', '$host_log', 'flood_log')}
${flood('emit_flood', '$host_emit', 'flood_event')}

  (func (export "berm_tool_ping") (param i32 i32) (result i64)
    (local $envelope i64) (local $at i32) (local $len i32) (local $colon i32) (local $start i32)
    (local.set $envelope (call $host_call (global.get $ping_at) (global.get $ping_len)))
    (local.set $at (call $ptr_of (local.get $envelope)))
    (local.set $len (call $len_of (local.get $envelope)))
    ;; {"ok": ...}: the third byte is o
    (if (i32.eq (i32.load8_u (i32.add (local.get $at) (i32.const 2))) (i32.const 111))
      (then (return (local.get $envelope))))
    (block $found
      (loop $scan
        (br_if $found (i32.eq (i32.load8_u (i32.add (local.get $at) (local.get $colon))) (i32.const 58)))
        (local.set $colon (i32.add (local.get $colon) (i32.const 1)))
        (br $scan)))
    (local.set $start (global.get $next))
    (call $put_const (global.get $error_open_at) (global.get $error_open_len))
    (call $put (i32.add (local.get $at) (local.get $colon)) (i32.sub (local.get $len) (local.get $colon)))
    (call $since (local.get $start)))
)`;
}

export function hostileManifest(peer: string): ManifestData {
  return sampleManifest({
    description: 'Misbehaves in every way a caller must survive',
    usage: '',
    tools: [
      tool('spin', 'Loops forever.'),
      tool('hog', 'Takes memory until it is refused, then traps.'),
      tool('recurse', 'Recurses until the stack runs out.'),
      tool('log_flood', 'Logs forever.'),
      tool('emit_flood', 'Emits events forever.'),
      tool('ping', `Calls ${peer}'s ping.`),
    ],
    events: [
      {
        name: 'tick',
        description: 'A tick.',
        fields: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
      },
    ],
    deps: { programs: [peer], syscalls: {}, secrets: [] },
  });
}

export async function hostileImage(peer: string): Promise<GuestImage> {
  const manifest = hostileManifest(peer);
  return { bytes: await buildImage(hostileWat(peer), manifest), manifest };
}

export interface GuestImage {
  bytes: Uint8Array;
  manifest: ManifestData;
}

export async function basicImage(options: BasicOptions = {}): Promise<GuestImage> {
  const manifest = basicManifest();
  return { bytes: await buildImage(basicWat(options), manifest), manifest };
}

export async function relayImage(programs: string[] = []): Promise<GuestImage> {
  const manifest = relayManifest(programs);
  return { bytes: await buildImage(relayWat(), manifest), manifest };
}

/** The HTTP syscalls the http guest can import, each behind the tool of the same last name. */
export const HTTP_TOOLS = { fetch: 'berm.http.fetch', proxy: 'berm.http.proxy' } as const;

export interface HttpGuestOptions {
  /** Hosts declared under `berm.http.fetch`; the syscall (and the `fetch` tool) is left out when undefined. */
  fetch?: string[];
  /** Hosts declared under `berm.http.proxy`; the syscall (and the `proxy` tool) is left out when undefined. */
  proxy?: string[];
  /** `deps.secrets`. */
  secrets?: string[];
  /** `deps.programs`: what its `call` tool may reach besides itself. */
  programs?: string[];
}

/**
 * A guest whose tools relay their arguments to a host call and answer `{"ok": <the host's envelope>}`:
 * - `fetch`: the arguments are the `berm.http.fetch` request (`{"method", "url", "headers", "body"}`);
 * - `proxy`: the same for `berm.http.proxy`;
 * - `call`: the arguments are a `berm.call` request, so one http guest can run another's fetch in a chain.
 * Each HTTP syscall is imported (as `"berm" "http.fetch"`) only when the options declare it.
 */
export function httpWat(options: HttpGuestOptions = {}): string {
  const imports = ['(import "berm" "call" (func $host_call (param i32 i32) (result i64)))'];
  const tools: string[] = [
    `
  (func (export "berm_tool_call") (param $ptr i32) (param $len i32) (result i64)
    (call $relay (call $host_call (local.get $ptr) (local.get $len))))`,
  ];
  for (const [tool, syscall] of Object.entries(HTTP_TOOLS)) {
    if (options[tool as keyof typeof HTTP_TOOLS] === undefined) continue;
    const field = syscall.slice('berm.'.length);
    imports.push(`(import "berm" "${field}" (func $host_${tool} (param i32 i32) (result i64)))`);
    tools.push(`
  (func (export "berm_tool_${tool}") (param $ptr i32) (param $len i32) (result i64)
    (call $relay (call $host_${tool} (local.get $ptr) (local.get $len))))`);
  }
  return `(module
  ${imports.join('\n  ')}${prelude('1', {})}

  (func $relay (param $envelope i64) (result i64)
    (call $ok_wrap (call $ptr_of (local.get $envelope)) (call $len_of (local.get $envelope))))
${tools.join('\n')}
)`;
}

export function httpManifest(options: HttpGuestOptions = {}): ManifestData {
  const syscalls: Record<string, string[]> = {};
  const tools = [tool('call', 'Its arguments are a berm.call request.')];
  for (const [name, syscall] of Object.entries(HTTP_TOOLS)) {
    const hosts = options[name as keyof typeof HTTP_TOOLS];
    if (hosts === undefined) continue;
    syscalls[syscall] = hosts;
    tools.push(tool(name, `Its arguments are a ${syscall} request.`));
  }
  return sampleManifest({
    description: 'Relays requests from its arguments to the HTTP syscalls',
    usage: '',
    tools,
    deps: { programs: options.programs ?? [], syscalls, secrets: options.secrets ?? [] },
  });
}

export async function httpImage(options: HttpGuestOptions = {}): Promise<GuestImage> {
  const manifest = httpManifest(options);
  return { bytes: await buildImage(httpWat(options), manifest), manifest };
}

/** Every kind of content block a tool may declare. */
export const ALL_CONTENT_KINDS = ['text', 'image', 'audio', 'resource_link', 'resource'] as const;

/** How many reports `flood` tries to send: far past the runtime's bound of progress reports per call. */
export const FLOOD_REPORTS = 5000;

export interface AskGuestOptions {
  /** The content kinds `envelope` declares (default: every kind). */
  content?: readonly string[];
  /** Leave out `berm.elicit`, `berm.sample` and the tools that ask (default: included). */
  noAsks?: true;
}

/**
 * A guest for what a tool may do beside answering a value (spec §4's content, progress and asking):
 * - `envelope`: answers its arguments' bytes as its whole result, so a test writes `{"ok", "content"}`;
 * - `progress`: reports progress 1, 2 and 3 of 3 (`berm.progress`), then answers `{"ok": "done"}`;
 * - `flood`: reports progress FLOOD_REPORTS times, then answers `{"ok": <the last report's envelope>}`;
 * - `regress`: reports progress 2, then 1, and answers `{"ok": <the second report's envelope>}`;
 * - `elicit` / `sample`: the arguments are a `berm.elicit` / `berm.sample` request; answers `{"ok": <the host's envelope>}`;
 * - `elicit_twice`: asks its arguments twice and answers `{"ok": [<first envelope>, <second>]}`.
 */
export function askWat(options: AskGuestOptions = {}): string {
  const asks = options.noAsks !== true;
  const imports = ['(import "berm" "progress" (func $progress (param i32 i32) (result i64)))'];
  if (asks) {
    imports.push('(import "berm" "elicit" (func $elicit (param i32 i32) (result i64)))');
    imports.push('(import "berm" "sample" (func $sample (param i32 i32) (result i64)))');
  }
  const asking = asks
    ? `
  (func (export "berm_tool_elicit") (param $ptr i32) (param $len i32) (result i64)
    (call $relay (call $elicit (local.get $ptr) (local.get $len))))
  (func (export "berm_tool_sample") (param $ptr i32) (param $len i32) (result i64)
    (call $relay (call $sample (local.get $ptr) (local.get $len))))
  (func (export "berm_tool_elicit_twice") (param $ptr i32) (param $len i32) (result i64)
    (local $first i64) (local $second i64) (local $start i32)
    ;; both asked before the answer is built: each envelope is allocated where the builder would write
    (local.set $first (call $elicit (local.get $ptr) (local.get $len)))
    (local.set $second (call $elicit (local.get $ptr) (local.get $len)))
    (local.set $start (global.get $next))
    (call $put_const (global.get $ok_list_at) (global.get $ok_list_len))
    (call $put (call $ptr_of (local.get $first)) (call $len_of (local.get $first)))
    (call $put_const (global.get $comma_at) (global.get $comma_len))
    (call $put (call $ptr_of (local.get $second)) (call $len_of (local.get $second)))
    (call $put_const (global.get $list_close_at) (global.get $list_close_len))
    (call $since (local.get $start)))`
    : '';
  return `(module
  ${imports.join('\n  ')}${prelude('1', {
    p1: '{"progress":1,"total":3,"message":"one"}',
    p2: '{"progress":2,"total":3,"message":"two"}',
    p3: '{"progress":3,"total":3,"message":"three"}',
    flood: '{"progress":1}',
    down: '{"progress":1}',
    done: '{"ok":"done"}',
    ok_list: '{"ok":[',
    comma: ',',
    list_close: ']}',
  })}

  (func $relay (param $envelope i64) (result i64)
    (call $ok_wrap (call $ptr_of (local.get $envelope)) (call $len_of (local.get $envelope))))

  (func (export "berm_tool_envelope") (param $ptr i32) (param $len i32) (result i64)
    (call $pack (local.get $ptr) (local.get $len)))

  (func (export "berm_tool_progress") (param $ptr i32) (param $len i32) (result i64)
    (drop (call $progress (global.get $p1_at) (global.get $p1_len)))
    (drop (call $progress (global.get $p2_at) (global.get $p2_len)))
    (drop (call $progress (global.get $p3_at) (global.get $p3_len)))
    (call $pack (global.get $done_at) (global.get $done_len)))

  (func (export "berm_tool_flood") (param $ptr i32) (param $len i32) (result i64)
    (local $i i32) (local $last i64)
    (loop $again
      (local.set $last (call $progress (global.get $flood_at) (global.get $flood_len)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $again (i32.lt_u (local.get $i) (i32.const ${FLOOD_REPORTS}))))
    (call $relay (local.get $last)))

  (func (export "berm_tool_regress") (param $ptr i32) (param $len i32) (result i64)
    (drop (call $progress (global.get $p2_at) (global.get $p2_len)))
    (call $relay (call $progress (global.get $down_at) (global.get $down_len))))
${asking}
)`;
}

export function askManifest(options: AskGuestOptions = {}): ManifestData {
  const content = [...(options.content ?? ALL_CONTENT_KINDS)] as NonNullable<ManifestData['tools'][number]['content']>;
  const tools: ManifestData['tools'] = [
    { ...tool('envelope', 'Answers its arguments as its result envelope.'), content },
    tool('progress', 'Reports progress three times.'),
    tool('flood', 'Reports progress without end.'),
    tool('regress', 'Reports a progress below the one before.'),
  ];
  const syscalls: Record<string, string[]> = {};
  if (options.noAsks !== true) {
    syscalls['berm.elicit'] = [];
    syscalls['berm.sample'] = [];
    tools.push(tool('elicit', 'Its arguments are a berm.elicit request.'));
    tools.push(tool('sample', 'Its arguments are a berm.sample request.'));
    tools.push(tool('elicit_twice', 'Asks its berm.elicit request twice.'));
  }
  return sampleManifest({
    description: 'Answers content, reports progress and asks its client',
    usage: '',
    tools,
    deps: { programs: [], syscalls, secrets: [] },
  });
}

export async function askImage(options: AskGuestOptions = {}): Promise<GuestImage> {
  const manifest = askManifest(options);
  return { bytes: await buildImage(askWat(options), manifest), manifest };
}
