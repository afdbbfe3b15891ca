// A prompt's messages (docs/contract.md §6a), for a `@prompt` function that answers more than one user
// text: each method adds one message holding one content block, and returns the builder so they chain.
import { mediaBlock, resourceBlock, resourceLinkBlock, textBlock } from './blocks';

/** Who a prompt's message is from. */
export enum Role {
  User,
  Assistant,
}

export class Messages {
  private items: string[] = [];

  private add(role: Role, block: string): Messages {
    this.items.push('{"role":"' + (role == Role.User ? 'user' : 'assistant') + '","content":' + block + '}');
    return this;
  }

  /** A text message. */
  text(text: string, role: Role = Role.User): Messages {
    return this.add(role, textBlock(text));
  }

  /** An image message: its bytes as Base64 and its MIME type (`image/png`). */
  image(base64: string, mimeType: string, role: Role = Role.User): Messages {
    return this.add(role, mediaBlock('image', base64, mimeType));
  }

  /** A sound message: its bytes as Base64 and its MIME type (`audio/wav`). */
  audio(base64: string, mimeType: string, role: Role = Role.User): Messages {
    return this.add(role, mediaBlock('audio', base64, mimeType));
  }

  /** A link to a resource; `mimeType` and `description` are left out when empty. */
  resourceLink(uri: string, name: string, mimeType: string = '', description: string = '', role: Role = Role.User): Messages {
    return this.add(role, resourceLinkBlock(uri, name, mimeType, description));
  }

  /** A resource embedded as text. */
  resource(uri: string, mimeType: string, text: string, role: Role = Role.User): Messages {
    return this.add(role, resourceBlock(uri, mimeType, 'text', text));
  }

  /** A resource embedded as bytes, given as Base64. */
  resourceBlob(uri: string, mimeType: string, base64: string, role: Role = Role.User): Messages {
    return this.add(role, resourceBlock(uri, mimeType, 'blob', base64));
  }

  /** The messages as the prompt's answer lists them. */
  toJSONText(): string {
    return '[' + this.items.join(',') + ']';
  }
}
