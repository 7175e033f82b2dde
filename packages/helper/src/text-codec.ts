import type { HelperResultOf } from '@fs-sandbox/policy';
import { FsError, LIMITS } from '@fs-sandbox/policy/core';
import { displayPath } from './display-path.js';
import { sizeText } from './size-text.js';

/** fs/readTextFile's result, as the helper builds it. */
export type TextResult = HelperResultOf<'fs/readTextFile'>;
export type TextEncoding = TextResult['encoding'];
export type LineEnding = TextResult['lineEnding'];

/** A file's bytes as text, and what it takes to write the text back as the same kind of file. */
export interface DecodedText {
  text: string;
  encoding: TextEncoding;
  /** The file starts with a byte order mark (not part of `text`). */
  bom: boolean;
}

const UTF8_BOM = [0xef, 0xbb, 0xbf];
const UTF16LE_BOM = [0xff, 0xfe];
const UTF16BE_BOM = [0xfe, 0xff];

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return prefix.every((byte, index) => bytes[index] === byte);
}

function binaryFile(path: string, why: string): FsError {
  return new FsError(
    'binary_file',
    `file \`${displayPath(path)}\` is not a text file: ${why} (read it with fs/readFile)`,
  );
}

/** file_too_large for the text methods, naming the cap. */
export function textTooLarge(path: string, detail: string): FsError {
  return new FsError(
    'file_too_large',
    `file \`${displayPath(path)}\` ${detail}; text methods read texts of at most ${sizeText(LIMITS.textMaxBytes)} (use fs/open and fs/readBlock for byte ranges of larger files)`,
  );
}

/**
 * Decodes a text file. UTF-16 needs its BOM (LE or BE); everything else must be UTF-8, with or
 * without a BOM. A file is binary (binary_file) if it holds a NUL (no text encoding we accept puts
 * U+0000 in a text) or is not valid in its encoding: a partial decode would be silently lossy.
 */
export function decodeText(bytes: Uint8Array, path: string): DecodedText {
  if (startsWith(bytes, UTF16LE_BOM) || startsWith(bytes, UTF16BE_BOM)) {
    const littleEndian = startsWith(bytes, UTF16LE_BOM);
    const body = Buffer.from(bytes.subarray(2));
    if (body.length % 2 !== 0) throw binaryFile(path, 'UTF-16 text of an odd number of bytes');
    if (!littleEndian) body.swap16();
    const text = strictDecode('utf-16le', body, path, 'invalid UTF-16');
    if (text.includes('\0')) throw binaryFile(path, 'it contains a NUL character');
    return { text, encoding: littleEndian ? 'utf-16le' : 'utf-16be', bom: true };
  }
  const bom = startsWith(bytes, UTF8_BOM);
  const body = bytes.subarray(bom ? UTF8_BOM.length : 0);
  if (body.includes(0)) throw binaryFile(path, 'it contains a NUL byte');
  return { text: strictDecode('utf-8', body, path, 'invalid UTF-8'), encoding: 'utf-8', bom };
}

function strictDecode(encoding: 'utf-8' | 'utf-16le', bytes: Uint8Array, path: string, why: string): string {
  try {
    return new TextDecoder(encoding, { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw binaryFile(path, why);
  }
}

/** The bytes of `text` written as `encoding`, with the BOM if the file had one. */
export function encodeText(text: string, encoding: TextEncoding, bom: boolean): Buffer {
  if (encoding === 'utf-8') {
    const body = Buffer.from(text, 'utf8');
    return bom ? Buffer.concat([Buffer.from(UTF8_BOM), body]) : body;
  }
  const body = Buffer.from(text, 'utf16le');
  if (encoding === 'utf-16be') body.swap16();
  return Buffer.concat([Buffer.from(encoding === 'utf-16le' ? UTF16LE_BOM : UTF16BE_BOM), body]);
}
