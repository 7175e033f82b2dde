import { FsError } from './error-kinds.js';

/**
 * POSIX file names are byte strings, JavaScript strings are UTF-16. A native path in this project
 * is a string in which every byte that is not part of valid UTF-8 is stored as the lone low
 * surrogate U+DC80..U+DCFF ("surrogateescape", as Python does). Valid UTF-8 text can never produce
 * a lone surrogate, so the mapping is lossless both ways: `file:///a%FF` -> "/a\uDCFF" ->
 * `file:///a%FF`. Node's fs would turn a lone surrogate into U+FFFD (another file!), so code that
 * touches the disk passes `fsPathArg(path)`, which yields the exact bytes as a Buffer when needed.
 */

const ESCAPE_BASE = 0xdc00;
// Made on first use: constructing a TextDecoder costs ~0.25 ms, on every helper start otherwise.
let decoder: InstanceType<typeof TextDecoder> | undefined;
const strictUtf8 = (): InstanceType<typeof TextDecoder> => {
  decoder ??= new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  return decoder;
};
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Bytes of a file name to a native path string (invalid UTF-8 bytes become escapes). */
export function decodePathBytes(input: Uint8Array | Buffer): string {
  // A plain view: @types/node 20's Buffer is not assignable to TS 5.9's generic Uint8Array.
  const bytes = new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  try {
    return strictUtf8().decode(bytes);
  } catch {
    return decodeWithEscapes(bytes);
  }
}

function decodeWithEscapes(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  while (i < bytes.length) {
    const length = validSequenceLength(bytes, i);
    if (length === 0) {
      out += String.fromCharCode(ESCAPE_BASE + (bytes[i] as number));
      i += 1;
    } else {
      out += strictUtf8().decode(bytes.subarray(i, i + length));
      i += length;
    }
  }
  return out;
}

/** Length of the well-formed UTF-8 sequence starting at `i`, or 0 when it is not well formed. */
function validSequenceLength(bytes: Uint8Array, i: number): number {
  const b0 = bytes[i] as number;
  if (b0 < 0x80) return 1;
  const cont = (k: number, lo = 0x80, hi = 0xbf): boolean => {
    const b = bytes[i + k];
    return b !== undefined && b >= lo && b <= hi;
  };
  if (b0 >= 0xc2 && b0 <= 0xdf) return cont(1) ? 2 : 0;
  // Ranges from the Unicode well-formed table: no overlongs, no encoded surrogates, nothing past U+10FFFF.
  if (b0 === 0xe0) return cont(1, 0xa0) && cont(2) ? 3 : 0;
  if (b0 === 0xed) return cont(1, 0x80, 0x9f) && cont(2) ? 3 : 0;
  if (b0 >= 0xe1 && b0 <= 0xef) return cont(1) && cont(2) ? 3 : 0;
  if (b0 === 0xf0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (b0 >= 0xf1 && b0 <= 0xf3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (b0 === 0xf4) return cont(1, 0x80, 0x8f) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

/** True when the string holds escaped (non-UTF-8) bytes or other unpaired surrogates. */
export function hasLoneSurrogate(path: string): boolean {
  return LONE_SURROGATE.test(path);
}

/**
 * The exact bytes a native path string stands for. An unpaired surrogate outside the escape range
 * cannot name any POSIX file, so it is refused rather than silently replaced.
 */
export function encodePathBytes(path: string): Buffer {
  if (!hasLoneSurrogate(path)) return Buffer.from(path, 'utf8');
  const bytes: number[] = [];
  for (let i = 0; i < path.length; i++) {
    const unit = path.charCodeAt(i);
    const next = path.charCodeAt(i + 1);
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      bytes.push(...Buffer.from(path.slice(i, i + 2), 'utf8'));
      i += 1;
    } else if (unit >= 0xdc80 && unit <= 0xdcff) {
      bytes.push(unit - ESCAPE_BASE);
    } else if (unit >= 0xd800 && unit <= 0xdfff) {
      throw new FsError('invalid_params', 'path contains an unpaired UTF-16 surrogate');
    } else {
      bytes.push(...Buffer.from(path[i] as string, 'utf8'));
    }
  }
  return Buffer.from(bytes);
}

/** What to hand to Node's fs for a native path: the string itself, or its exact bytes when it holds escapes. */
export function fsPathArg(path: string): string | Buffer {
  return hasLoneSurrogate(path) ? encodePathBytes(path) : path;
}
