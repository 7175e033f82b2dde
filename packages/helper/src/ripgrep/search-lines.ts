import type { HelperResultOf } from '@fs-sandbox/policy';
import { decodePathBytes, hasLoneSurrogate, LIMITS } from '@fs-sandbox/policy/core';
import { percentEscaped } from '../wire-file-name.js';

export type SearchMatch = HelperResultOf<'fs/search'>['matches'][number];
export type WireLine = Pick<SearchMatch, 'line' | 'lineTruncated' | 'nonUtf8Line'>;

/** A line of ripgrep output as fs/search sends it, and where a byte offset of it lands in that text. */
export interface ShownLine {
  fields: WireLine;
  /** The UTF-16 offset in `fields.line` of byte `offset` of the line (clipped to the text shown). */
  offsetOf(offset: number): number;
}

/** Without its line terminator (`\n` or `\r\n`, as ripgrep includes it). */
function withoutTerminator(bytes: Buffer): Buffer {
  let end = bytes.length;
  if (end > 0 && bytes[end - 1] === 0x0a) end -= 1;
  if (end > 0 && bytes[end - 1] === 0x0d) end -= 1;
  return bytes.subarray(0, end);
}

/** At most `max` UTF-16 units, never splitting a surrogate pair. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

/**
 * The line cut to LIMITS.searchMaxLineChars characters (`lineTruncated`); a line that is not valid
 * UTF-8 keeps its bytes exactly in the readDirectory name form (`%XX`, `nonUtf8Line`).
 */
export function showLine(raw: Buffer): ShownLine {
  const bytes = withoutTerminator(raw);
  const decoded = decodePathBytes(bytes);
  const kept = cut(decoded, LIMITS.searchMaxLineChars);
  const nonUtf8 = hasLoneSurrogate(kept);
  const fields: WireLine = { line: nonUtf8 ? percentEscaped(kept) : kept };
  if (kept.length < decoded.length) fields.lineTruncated = true;
  if (nonUtf8) fields.nonUtf8Line = true;
  const shownLength = fields.line.length;
  return {
    fields,
    offsetOf(offset: number): number {
      const prefix = cut(decodePathBytes(bytes.subarray(0, Math.min(offset, bytes.length))), kept.length);
      const length = nonUtf8 ? percentEscaped(prefix).length : prefix.length;
      return Math.min(length, shownLength);
    },
  };
}
