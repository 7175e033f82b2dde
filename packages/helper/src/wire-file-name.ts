import type { HelperResultOf } from '@fs-sandbox/policy';
import { hasLoneSurrogate } from '@fs-sandbox/policy/core';

type WireFileName = Pick<HelperResultOf<'fs/readDirectory'>['entries'][number], 'fileName' | 'nonUtf8Name'>;

/**
 * A directory entry's name for a JSON reply. Valid UTF-8 names are sent as they are. A name that
 * is not valid UTF-8 cannot be sent as a JSON string without changing it, and silently replacing
 * bytes with U+FFFD would name a different file (or none). Such a name is sent with every byte
 * that is not part of valid UTF-8, and every `%`, written as `%XX` (upper-case hex), and the entry
 * is marked `nonUtf8Name: true`: percent-decoding `fileName` gives the exact bytes, and the
 * encoded form can be appended to the directory's `file:` URI to name the file.
 */
export function wireFileName(name: string): WireFileName {
  if (!hasLoneSurrogate(name)) return { fileName: name };
  return { fileName: percentEscaped(name), nonUtf8Name: true };
}

/**
 * The `%XX` form above of a string holding escaped non-UTF-8 bytes (path-bytes.ts). fs/search sends
 * lines of text that is not UTF-8 this way too.
 */
export function percentEscaped(text: string): string {
  let encoded = '';
  for (const char of text) {
    const unit = char.charCodeAt(0);
    if (unit >= 0xdc80 && unit <= 0xdcff) encoded += `%${(unit - 0xdc00).toString(16).toUpperCase()}`;
    else if (char === '%') encoded += '%25';
    else encoded += char;
  }
  return encoded;
}
