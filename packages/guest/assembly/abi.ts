// The guest side of the ABI (docs/contract.md §4), called by the glue the transform writes for
// each tool. Memory: what the host writes (a tool's arguments, a host call's answer) lives in
// blocks taken from the allocator with heap.alloc, outside the garbage collector's view, so a
// collection can never free them before they are read; each is freed as soon as it has been
// decoded. A tool's result is a managed buffer held by one global until the next result replaces
// it, so the host can read it after the export returns and the collector reclaims it afterwards.
import { JSON } from 'json-as';
import { textBlock } from './blocks';
import { dropContent, takeContent } from './content';
import { Messages } from './messages';

let lastResult: ArrayBuffer | null = null;

/** The allocator the host writes arguments and host-call answers with. */
export function berm_alloc(len: i32): usize {
  return heap.alloc(<usize>max(len, 0));
}

/** Decodes `len` bytes the host wrote at `ptr` and frees them. */
export function takeText(ptr: usize, len: i32): string {
  const text = String.UTF8.decodeUnsafe(ptr, <usize>len);
  heap.free(ptr);
  return text;
}

/** Unpacks a host call's (ptr << 32) | len answer into its text. */
export function takeAnswer(packed: i64): string {
  return takeText(<usize>(<u64>packed >>> 32), <i32>(packed & 0xffffffff));
}

function answer(text: string): i64 {
  const bytes = String.UTF8.encode(text);
  lastResult = bytes;
  return ((<i64>changetype<usize>(bytes)) << 32) | <i64>bytes.byteLength;
}

/** A tool's arguments, parsed from what the host wrote. */
export function __berm_args<T>(ptr: usize, len: i32): T {
  dropContent();
  return JSON.parse<T>(takeText(ptr, len));
}

/** Frees the arguments of a tool that takes none. */
export function __berm_no_args(ptr: usize, len: i32): void {
  dropContent();
  heap.free(ptr);
}

/** {"ok": value}, with the content blocks the call added. */
export function __berm_ok<T>(value: T): i64 {
  return answer('{"ok":' + JSON.stringify<T>(value) + takeContent() + '}');
}

/** {"ok": null}, for a tool that returns nothing, with the content blocks the call added. */
export function __berm_ok_void(): i64 {
  return answer('{"ok":null' + takeContent() + '}');
}

/** A prompt's arguments: the `arguments` member of what the host wrote (`{"arguments": {...}}`), parsed. */
export function __berm_prompt_args<T>(ptr: usize, len: i32): T {
  const request = JSON.parse<JSON.Obj>(takeText(ptr, len));
  const args = request.get('arguments');
  return JSON.parse<T>(args === null ? '{}' : args.toString());
}

/** A prompt's answer: a string is one user message holding it; Messages are listed as built. */
export function __berm_prompt_answer<T>(value: T): i64 {
  if (isString<T>()) {
    return answer('{"ok":{"messages":[{"role":"user","content":' + textBlock(changetype<string>(value)) + '}]}}');
  } else if (value instanceof Messages) {
    return answer('{"ok":{"messages":' + changetype<Messages>(value).toJSONText() + '}}');
  } else {
    ERROR('a @prompt function returns a string or Messages');
    return 0;
  }
}

/** {"error": message}, for the abort that unwound the call. */
export function __berm_abort_result(): i64 {
  dropContent();
  // @ts-expect-error: a global of ~lib/berm_abort, which the transform adds to every build
  return answer('{"error":' + JSON.stringify<string>(__berm_abort_message()) + '}');
}
