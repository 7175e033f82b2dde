import { type GlobAlternative, type GlobPiece, parseDenyGlob } from '@fs-sandbox/policy';

/**
 * Regexes that match a path under every spelling APFS treats as the same name. APFS volumes are
 * case-insensitive by default and normalisation-insensitive (NFC and NFD name the same file), and
 * the path Seatbelt checks is the one the process spelled, so an exclusion written for
 * `/w/.git` must also catch `/w/.GIT` and `/w/café` must also catch its decomposed form.
 *
 * These regexes carry path text, so they never appear in the profile: they travel as `-D`
 * parameters and the profile only says `(regex (param "…"))`. Every regex metacharacter of the path
 * is escaped; only the structure added here (`[aA]`, `(x|y)`, anchors) is regex syntax.
 */

const REGEX_METACHARACTERS = /[\\^$.|?*+()[\]{}]/g;
const COMBINING_MARK = /\p{M}/u;

function escapeRegex(text: string): string {
  return text.replace(REGEX_METACHARACTERS, (char) => `\\${char}`);
}

/** Splits NFC text into base characters with their combining marks (a decomposed Hangul syllable stays one unit). */
function characterClusters(text: string): string[] {
  const clusters: string[] = [];
  for (const codePoint of text.normalize('NFC')) {
    const last = clusters.length - 1;
    if (last >= 0 && COMBINING_MARK.test(codePoint)) clusters[last] += codePoint;
    else clusters.push(codePoint);
  }
  return clusters;
}

/** Every spelling of one character that APFS may treat as equal: both cases, both normal forms. */
function spellings(cluster: string): string[] {
  const forms = new Set<string>();
  for (const cased of [cluster, cluster.toLowerCase(), cluster.toUpperCase()]) {
    forms.add(cased.normalize('NFC'));
    forms.add(cased.normalize('NFD'));
  }
  return [...forms];
}

function clusterPattern(cluster: string): string {
  const forms = spellings(cluster);
  if (forms.length === 1) return escapeRegex(forms[0] as string);
  // A bracket expression is only safe for single ASCII characters: the kernel regex engine works on
  // bytes, and a multi-byte UTF-8 character inside brackets would become a set of bytes.
  if (forms.every((form) => form.length === 1 && form.charCodeAt(0) < 0x80)) return `[${forms.join('')}]`;
  return `(${forms.map(escapeRegex).join('|')})`;
}

/** The unanchored pattern for a literal path text. */
function literalPattern(text: string): string {
  return characterClusters(text).map(clusterPattern).join('');
}

/** Matches `path` itself in any spelling. */
export function exactPathRegex(path: string): string {
  return `^${literalPattern(path)}$`;
}

/** Matches `path` and everything beneath it, in any spelling. */
export function subtreePathRegex(path: string): string {
  return `^${literalPattern(path)}(/.*)?$`;
}

/**
 * Translates an absolute deny glob into a regex over the same spellings. It is parsed, and refused
 * when it cannot be enforced, exactly as on every other platform; each brace alternative becomes
 * one branch. `**` crosses directories (`**` followed by `/` may match nothing) and `*` stays inside
 * one name. `?` and `[...]` classes widen to "one or more characters of one name": the kernel regex
 * engine may count bytes, and a deny must never miss a name because one of its characters takes
 * several bytes in UTF-8. A match denies the path and everything beneath it.
 */
export function globRegex(glob: string): string {
  const branches = parseDenyGlob(glob, 'macos').alternatives.map(alternativeRegex);
  return `^${branches.length === 1 ? branches[0] : `(${branches.join('|')})`}(/.*)?$`;
}

function alternativeRegex(alternative: GlobAlternative): string {
  let pattern = literalPattern(alternative.root);
  alternative.segments.forEach((segment, i) => {
    const last = i === alternative.segments.length - 1;
    if (segment.kind === 'globstar') pattern += last ? '.*' : '(.*/)?';
    else pattern += segment.pieces.map(pieceRegex).join('') + (last ? '' : '/');
  });
  return pattern;
}

function pieceRegex(piece: GlobPiece): string {
  switch (piece.kind) {
    case 'literal':
      return literalPattern(piece.text);
    case 'star':
      return '[^/]*';
    case 'one':
    case 'class':
      return '[^/]+';
  }
}
