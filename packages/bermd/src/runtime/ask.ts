/**
 * `berm.elicit` and `berm.sample` on the main thread: the guest's worker waits (http-fetch.ts) while the
 * call's own `ask` puts the question to the client that made the call. The wait is bounded by the call's
 * time limit, less a reserve left to the guest: when the client has not answered by then, the guest is
 * answered `{"refused": ...}` saying so, the question is withdrawn (its signal aborts), and the guest
 * still has the reserve to answer its caller. Nothing waits past the call.
 */
import type { Call } from './call.js';
import type { WorkerMessage } from './worker-messages.js';
import { answerWorker } from './http-fetch.js';
import type { HostEnvelope } from './host-call.js';

/** The most time kept back for the guest after its client failed to answer: a tenth of the call's limit, at most a second. */
export function askReserveMs(callTimeoutMs: number): number {
  return Math.min(1000, Math.floor(callTimeoutMs / 10));
}

/** Serves one ask of `call`, from a harness granted `granted`; the worker is answered exactly once. */
export function serveAsk(call: Call, message: Extract<WorkerMessage, { kind: 'host' }>, granted: readonly string[]): void {
  const { reply, flag, name, harness, tool } = message;
  let answered = false;
  const answer = (envelope: HostEnvelope): void => {
    if (answered) return;
    answered = true;
    answerWorker(reply, flag, envelope);
  };
  if (!granted.includes(name)) {
    answer({ refused: `${harness} is not granted ${name}: its deploy's grants leave it out (crab deploy --grant syscall=${name})` });
    return;
  }
  const ask = call.options.ask;
  if (ask === undefined) {
    answer({ refused: `${name}: this call was not made by an MCP client bermd can ask` });
    return;
  }
  const limit = call.entry.callTimeoutMs;
  const reserve = askReserveMs(limit);
  const wait = Math.floor(call.remainingMs() - reserve);
  if (wait <= 0) {
    answer({ refused: `${name}: the call's time limit of ${limit} ms leaves no time to wait for its client` });
    return;
  }
  const controller = new AbortController();
  const onStop = (): void => controller.abort();
  call.stop.addEventListener('abort', onStop);
  const timer = setTimeout(() => {
    answer({
      refused: `${name}: the client did not answer within the call's time limit of ${limit} ms; the question was withdrawn and ${reserve} ms are left to finish`,
    });
    controller.abort();
  }, wait);
  let asked: Promise<HostEnvelope>;
  try {
    asked = ask({ name, harness, tool, request: message.request, signal: controller.signal });
  } catch (e) {
    asked = Promise.reject(e);
  }
  asked
    .then(answer, (e: unknown) => answer({ failed: `${name} failed in the host: ${e instanceof Error ? e.message : String(e)}` }))
    .finally(() => {
      clearTimeout(timer);
      call.stop.removeEventListener('abort', onStop);
    });
}
