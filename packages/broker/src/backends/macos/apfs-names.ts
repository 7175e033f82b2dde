/**
 * APFS compares file names case-insensitively (by default) and without regard to Unicode
 * normalisation. Decisions about which rule covers which path use this comparison, so a rule can
 * never be skipped because the policy and the disk spell a name differently; at worst a rule
 * covers one more spelling, which only narrows what the sandbox allows.
 */
function foldApfsPath(path: string): string {
  return path.normalize('NFC').toLowerCase();
}

export function sameApfsPath(a: string, b: string): boolean {
  return foldApfsPath(a) === foldApfsPath(b);
}

/** True when `path` is `root` or lies beneath it, under APFS name comparison. */
export function apfsPathIsInside(path: string, root: string): boolean {
  const p = foldApfsPath(path);
  const r = foldApfsPath(root);
  return r === '/' || p === r || p.startsWith(`${r}/`);
}
