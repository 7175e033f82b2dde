/**
 * A native path as shown in error messages. Bytes that are not UTF-8 live in path strings as lone
 * surrogates (see policy path-bytes.ts); a lone surrogate in a JSON reply breaks strict parsers
 * (serde rejects it), so messages spell such bytes as `\xNN` instead.
 */
export function displayPath(path: string): string {
  return path.replace(
    /[\uDC80-\uDCFF]/g,
    (unit) => `\\x${(unit.charCodeAt(0) - 0xdc00).toString(16).toUpperCase()}`,
  );
}
