import { type ErrorKind, FsError } from './error-kinds.js';

/**
 * Strict standard base64 (RFC 4648 alphabet, canonical `=` padding, zero unused bits). Node's own
 * decoder silently skips bad characters, which would write different bytes than the client sent
 * (silent data loss), so input is validated first. Messages follow the reference, e.g.
 * "fs/writeFile requires valid base64 dataBase64: Invalid symbol 37, offset 0.".
 */

const CANONICAL_SHAPE = /^[A-Za-z0-9+/]*={0,2}$/;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

export function decodeStrictBase64(
  text: string,
  method: string,
  field: string,
  kind: ErrorKind = 'invalid_request',
): Buffer {
  const problem = base64Problem(text);
  if (problem !== null) throw new FsError(kind, `${method} requires valid base64 ${field}: ${problem}`);
  return Buffer.from(text, 'base64');
}

/** Why `text` is not canonical base64, or null when it is. The cheap regex settles the common case. */
export function base64Problem(text: string): string | null {
  const padStart = text.length - (text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0);
  if (CANONICAL_SHAPE.test(text)) {
    if (text.length % 4 !== 0)
      return padStart % 4 === 1 ? `Invalid input length: ${padStart}` : 'Invalid padding';
    return lastSymbolProblem(text, padStart);
  }
  for (let i = 0; i < text.length; i++) {
    const char = text[i] as string;
    if (char === '=' && i >= padStart) continue;
    if (!ALPHABET.includes(char)) return `Invalid symbol ${text.charCodeAt(i)}, offset ${i}.`;
  }
  return 'Invalid padding';
}

function lastSymbolProblem(text: string, dataLength: number): string | null {
  const remainder = dataLength % 4;
  if (remainder === 0) return null;
  const last = text[dataLength - 1] as string;
  // With 2 (or 3) symbols in the final quantum, the low 4 (or 2) bits of the last one are unused
  // and must be zero; otherwise two different strings would decode to the same bytes.
  const unusedMask = remainder === 2 ? 0b1111 : 0b11;
  if ((ALPHABET.indexOf(last) & unusedMask) !== 0) {
    return `Invalid last symbol ${text.charCodeAt(dataLength - 1)}, offset ${dataLength - 1}.`;
  }
  return null;
}

/** Bytes a base64 string decodes to, without decoding it (for the audit log and the statistics). */
export function decodedBase64Length(text: string): number {
  let padding = 0;
  if (text.endsWith('==')) padding = 2;
  else if (text.endsWith('=')) padding = 1;
  return Math.max(0, Math.floor((text.length * 3) / 4) - padding);
}
