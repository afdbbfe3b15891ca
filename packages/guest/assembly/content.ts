// Content blocks a tool answers beside its value (docs/contract.md §6a): added while the tool runs and
// taken by the glue into the call's envelope, `{"ok": value, "content": [...]}`.
import { mediaBlock, resourceBlock, resourceLinkBlock, textBlock } from './blocks';

let blocks: string[] = [];

/**
 * The call's content blocks, in MCP's shapes. Each method adds one block and returns the builder, so
 * blocks chain: `content.text("Here:").image(png, "image/png")`. The tool declares the kinds it
 * answers with a doc tag, `@content text,image`; the host refuses a block of a kind not declared.
 */
export class Content {
  /** A text block. */
  text(text: string): Content {
    blocks.push(textBlock(text));
    return this;
  }

  /** An image: its bytes as Base64 and its MIME type (`image/png`). */
  image(base64: string, mimeType: string): Content {
    blocks.push(mediaBlock('image', base64, mimeType));
    return this;
  }

  /** A sound: its bytes as Base64 and its MIME type (`audio/wav`). */
  audio(base64: string, mimeType: string): Content {
    blocks.push(mediaBlock('audio', base64, mimeType));
    return this;
  }

  /** A link to a resource the client may read; `mimeType` and `description` are left out when empty. */
  resourceLink(uri: string, name: string, mimeType: string = '', description: string = ''): Content {
    blocks.push(resourceLinkBlock(uri, name, mimeType, description));
    return this;
  }

  /** A resource embedded as text. */
  resource(uri: string, mimeType: string, text: string): Content {
    blocks.push(resourceBlock(uri, mimeType, 'text', text));
    return this;
  }

  /** A resource embedded as bytes, given as Base64. */
  resourceBlob(uri: string, mimeType: string, base64: string): Content {
    blocks.push(resourceBlock(uri, mimeType, 'blob', base64));
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
