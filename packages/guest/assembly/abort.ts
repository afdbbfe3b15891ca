// Parsed by the transform as the library file ~lib/berm_abort.ts, whose exports are globals, and
// aliased as the program's `abort`: so `throw`, `assert` and the runtime's own checks land here
// instead of importing env.abort from the host. The message is kept, then __berm_unwind (whose
// body the transform replaces with a wasm `throw`) unwinds to the tool's entry, which answers
// {"error": message}.

let abortMessage: string = '';
let aborting: bool = false;

function __berm_unwind(): void {
  unreachable();
}

/** Where an abort lands. A throw in the harness's own code is its message; one in a library file also says where. */
export function __berm_abort(message: string | null, fileName: string | null, line: u32, column: u32): void {
  // An abort while reporting one (out of memory, say) unwinds with the first message: formatting
  // this one would allocate again.
  if (aborting) {
    __berm_unwind();
    return;
  }
  aborting = true;
  let text = message !== null ? message : 'abort';
  if (fileName !== null && fileName.startsWith('~lib/')) {
    text += ' (' + fileName + ':' + line.toString() + ':' + column.toString() + ')';
  }
  abortMessage = text;
  __berm_unwind();
}

/** The message of the abort that unwound the current tool call; clears it. */
export function __berm_abort_message(): string {
  const text = abortMessage;
  abortMessage = '';
  aborting = false;
  return text;
}
