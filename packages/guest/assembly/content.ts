// Content blocks a tool answers beside its value (docs/contract.md §6a): added while the tool runs and
// taken by the glue into the call's envelope, `{"ok": value, "content": [...]}`. The blocks are JSON
// text written here, one string each, so a harness that answers content pays for no JSON object model.
import { JSON } from 'json-as';

let blocks: string[] = [];

function quoted(text: string): string {
  return JSON.stringify<string>(text);
}

/**
 * The call's content blocks, in MCP's shapes. Each method adds one block and returns the builder, so
 * blocks chain: `content.text("Here:").image(png, "image/png")`. The tool declares the kinds it
 * answers with a doc tag, `@content text,image`; the host refuses a block of a kind not declared.
 */
export class Content {
  /** A text block. */
  text(text: string): Content {
    blocks.push('{"type":"text","text":' + quoted(text) + '}');
    return this;
  }

  /** An image: its bytes as Base64 and its MIME type (`image/png`). */
  image(base64: string, mimeType: string): Content {
    blocks.push('{"type":"image","data":' + quoted(base64) + ',"mimeType":' + quoted(mimeType) + '}');
    return this;
  }

  /** A sound: its bytes as Base64 and its MIME type (`audio/wav`). */
  audio(base64: string, mimeType: string): Content {
    blocks.push('{"type":"audio","data":' + quoted(base64) + ',"mimeType":' + quoted(mimeType) + '}');
    return this;
  }

  /** A link to a resource the client may read; `mimeType` and `description` are left out when empty. */
  resourceLink(uri: string, name: string, mimeType: string = '', description: string = ''): Content {
    let block = '{"type":"resource_link","uri":' + quoted(uri) + ',"name":' + quoted(name);
    if (mimeType.length > 0) block += ',"mimeType":' + quoted(mimeType);
    if (description.length > 0) block += ',"description":' + quoted(description);
    blocks.push(block + '}');
    return this;
  }

  /** A resource embedded as text. */
  resource(uri: string, mimeType: string, text: string): Content {
    blocks.push('{"type":"resource","resource":{"uri":' + quoted(uri) + ',"mimeType":' + quoted(mimeType) + ',"text":' + quoted(text) + '}}');
    return this;
  }

  /** A resource embedded as bytes, given as Base64. */
  resourceBlob(uri: string, mimeType: string, base64: string): Content {
    blocks.push('{"type":"resource","resource":{"uri":' + quoted(uri) + ',"mimeType":' + quoted(mimeType) + ',"blob":' + quoted(base64) + '}}');
    return this;
  }
}

/** The builder a tool adds its blocks with. */
export const content = new Content();

/** The envelope's `,"content":[...]` member for the blocks added since the call began ("" for none), which it clears. */
export function takeContent(): string {
  if (blocks.length == 0) return '';
  const member = ',"content":[' + blocks.join(',') + ']';
  blocks = [];
  return member;
}

/** Forgets the blocks of a call that did not answer a value. */
export function dropContent(): void {
  if (blocks.length > 0) blocks = [];
}
