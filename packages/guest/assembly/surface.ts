// The guest side of `berm_resource_read` and `berm_complete` (docs/contract.md §6a), called by the
// dispatch the transform writes from the program's `@resource`, `@template` and `@complete` functions.
import { JSON } from 'json-as';
import { takeText } from './abi';
import { base64, quoted } from './blocks';

/** What `berm_resource_read` is asked: the path read and, for a template's instance, the template and its variables. */
@json
export class ReadRequest {
  path: string = '';
  template: string | null = null;
  variables: Map<string, string> = new Map<string, string>();
}

@json
class CompletionRef {
  type: string = '';
  name: string = '';
  path: string = '';
}

@json
class CompletionArgument {
  name: string = '';
  value: string = '';
}

@json
class CompletionContext {
  arguments: Map<string, string> = new Map<string, string>();
}

/** What `berm_complete` is asked: the prompt or template, the argument or variable, its value so far. */
@json
export class CompleteRequest {
  ref: CompletionRef = new CompletionRef();
  argument: CompletionArgument = new CompletionArgument();
  context: CompletionContext | null = null;

  /** The prompt's name, or the template's path. */
  get target(): string {
    return this.ref.type == 'prompt' ? this.ref.name : this.ref.path;
  }
}

export function __berm_read_request(ptr: usize, len: i32): ReadRequest {
  return JSON.parse<ReadRequest>(takeText(ptr, len));
}

/** A template's variables as the function's `@json` class of string fields. */
export function __berm_read_variables<T>(request: ReadRequest): T {
  return JSON.parse<T>(JSON.stringify<Map<string, string>>(request.variables));
}

let lastRead: ArrayBuffer | null = null;

function answerText(text: string): i64 {
  const bytes = String.UTF8.encode(text);
  lastRead = bytes;
  return ((<i64>changetype<usize>(bytes)) << 32) | <i64>bytes.byteLength;
}

/** A read's answer: a string is the content's text, a Uint8Array its bytes (Base64 as `blob`). */
export function __berm_read_answer<T>(value: T): i64 {
  if (isString<T>()) {
    return answerText('{"ok":{"contents":[{"text":' + quoted(changetype<string>(value)) + '}]}}');
  } else if (value instanceof Uint8Array) {
    return answerText('{"ok":{"contents":[{"blob":' + quoted(base64(changetype<Uint8Array>(value))) + '}]}}');
  } else {
    ERROR('a @resource or @template function returns a string or a Uint8Array');
    return 0;
  }
}

/** The failure of a read of a path no function answers: bermd matched it to the manifest, so the build and the manifest disagree. */
export function __berm_read_unknown(request: ReadRequest): i64 {
  throw new Error('no @resource or @template function answers ' + request.path);
}

export function __berm_complete_request(ptr: usize, len: i32): CompleteRequest {
  return JSON.parse<CompleteRequest>(takeText(ptr, len));
}

/** A completion's answer: the values suggested. */
export function __berm_complete_answer(values: string[]): i64 {
  return answerText('{"ok":{"values":' + JSON.stringify<string[]>(values) + '}}');
}
