// MCP content blocks as JSON text (docs/contract.md §6a), written once for a tool's content and a
// prompt's messages alike, so a harness that answers them pays for no JSON object model.
import { JSON } from 'json-as';

export function quoted(text: string): string {
  return JSON.stringify<string>(text);
}

export function textBlock(text: string): string {
  return '{"type":"text","text":' + quoted(text) + '}';
}

/** An image or audio block: `kind` is "image" or "audio", the bytes given as Base64. */
export function mediaBlock(kind: string, base64: string, mimeType: string): string {
  return '{"type":"' + kind + '","data":' + quoted(base64) + ',"mimeType":' + quoted(mimeType) + '}';
}

export function resourceLinkBlock(uri: string, name: string, mimeType: string, description: string): string {
  let block = '{"type":"resource_link","uri":' + quoted(uri) + ',"name":' + quoted(name);
  if (mimeType.length > 0) block += ',"mimeType":' + quoted(mimeType);
  if (description.length > 0) block += ',"description":' + quoted(description);
  return block + '}';
}

/** An embedded resource: `member` is "text" or "blob" (Base64). */
export function resourceBlock(uri: string, mimeType: string, member: string, value: string): string {
  return '{"type":"resource","resource":{"uri":' + quoted(uri) + ',"mimeType":' + quoted(mimeType) + ',"' + member + '":' + quoted(value) + '}}';
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** `bytes` as standard Base64 with padding (RFC 4648 §4), as MCP carries bytes. */
export function base64(bytes: Uint8Array): string {
  const out = new Array<string>();
  const n = bytes.length;
  for (let i = 0; i < n; i += 3) {
    const b0 = <u32>bytes[i];
    const b1 = i + 1 < n ? <u32>bytes[i + 1] : 0;
    const b2 = i + 2 < n ? <u32>bytes[i + 2] : 0;
    const triple = (b0 << 16) | (b1 << 8) | b2;
    out.push(ALPHABET.charAt((triple >> 18) & 63));
    out.push(ALPHABET.charAt((triple >> 12) & 63));
    out.push(i + 1 < n ? ALPHABET.charAt((triple >> 6) & 63) : '=');
    out.push(i + 2 < n ? ALPHABET.charAt(triple & 63) : '=');
  }
  return out.join('');
}
