import { FsError } from '../error-kinds.js';

/**
 * The Codex patch format (`*** Begin Patch` … `*** End Patch`), parsed with the reference's
 * tolerance: the Begin/End markers and the file headers may be padded with whitespace, and a patch
 * wrapped in a heredoc (`<<'EOF'` … `EOF`, as models send it to a shell) is unwrapped. Everything
 * else — `@@` markers, `*** Move to:`, `*** End of File`, the `+`/`-`/` ` line prefixes — must be
 * exact, as in the reference, where a padded `@@` is a context line. Pure: no I/O.
 */

export interface PatchChunk {
  /** The `@@ <context>` line the chunk is sought after, or null for a bare `@@`. */
  context: string | null;
  oldLines: string[];
  newLines: string[];
  /**
   * For each new line, the index of the old line it is (a context line, which keeps the file's own
   * text and line break, as the reference keeps it), or null for an added line.
   */
  keptFrom: (number | null)[];
  /** `*** End of File`: the old lines must end the file. */
  endOfFile: boolean;
}

export type PatchHunk =
  | { kind: 'add'; path: string; contents: string }
  | { kind: 'delete'; path: string }
  | { kind: 'update'; path: string; movePath: string | null; chunks: PatchChunk[] };

const BEGIN = '*** Begin Patch';
const END = '*** End Patch';
const ADD = '*** Add File: ';
const DELETE = '*** Delete File: ';
const UPDATE = '*** Update File: ';
const MOVE_TO = '*** Move to: ';
const END_OF_FILE = '*** End of File';
const CONTEXT = '@@ ';
const BARE_CONTEXT = '@@';
const HEREDOC_OPENERS = new Set(['<<EOF', "<<'EOF'", '<<"EOF"']);
/** The first hunk's line number: the reference counts from the Begin marker, line 1. */
const FIRST_HUNK_LINE = 2;
const NO_LINES = 'Update hunk does not contain any lines';

function invalidPatch(message: string): FsError {
  return new FsError('patch_parse_error', `Invalid patch: ${message}`);
}

function invalidHunk(message: string, line: number): FsError {
  return new FsError('patch_parse_error', `Invalid patch hunk on line ${line}: ${message}`, { line });
}

/** Splits as Rust's `str::lines` does: on LF, a CR before it dropped, no empty last line. */
function rustLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
}

/** Throws `patch_parse_error` with the reference's message (and `data.line` for a hunk). */
export function parsePatch(patch: string): PatchHunk[] {
  const lines = rustLines(patch.trim());
  const body = patchBody(lines);
  const hunks: PatchHunk[] = [];
  let index = 0;
  while (index < body.length) {
    const { hunk, consumed } = parseHunk(body, index, FIRST_HUNK_LINE + index);
    hunks.push(hunk);
    index += consumed;
  }
  return hunks;
}

function patchBody(lines: string[]): string[] {
  const strict = boundaryError(lines);
  if (strict === null) return lines.slice(1, -1);
  const first = lines[0];
  const last = lines.at(-1);
  if (first !== undefined && HEREDOC_OPENERS.has(first) && last?.endsWith('EOF') && lines.length >= 4) {
    const inner = lines.slice(1, -1);
    const innerError = boundaryError(inner);
    if (innerError !== null) throw innerError;
    return inner.slice(1, -1);
  }
  throw strict;
}

function boundaryError(lines: string[]): FsError | null {
  const first = lines[0]?.trim();
  const last = lines.at(-1)?.trim();
  if (first === BEGIN && last === END && lines.length >= 2) return null;
  if (first !== undefined && first !== BEGIN) {
    return invalidPatch(`The first line of the patch must be '${BEGIN}'`);
  }
  return invalidPatch(`The last line of the patch must be '${END}'`);
}

function parseHunk(lines: string[], start: number, line: number): { hunk: PatchHunk; consumed: number } {
  const header = (lines[start] as string).trim();
  if (header.startsWith(ADD)) {
    let contents = '';
    let index = start + 1;
    for (; index < lines.length && (lines[index] as string).startsWith('+'); index++) {
      contents += `${(lines[index] as string).slice(1)}\n`;
    }
    return { hunk: { kind: 'add', path: header.slice(ADD.length), contents }, consumed: index - start };
  }
  if (header.startsWith(DELETE)) {
    return { hunk: { kind: 'delete', path: header.slice(DELETE.length) }, consumed: 1 };
  }
  if (header.startsWith(UPDATE)) return parseUpdate(lines, start, line, header.slice(UPDATE.length));
  throw invalidHunk(
    `'${header}' is not a valid hunk header. Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'`,
    line,
  );
}

function parseUpdate(
  lines: string[],
  start: number,
  line: number,
  path: string,
): { hunk: PatchHunk; consumed: number } {
  let index = start + 1;
  let movePath: string | null = null;
  if (lines[index]?.startsWith(MOVE_TO)) {
    movePath = (lines[index] as string).slice(MOVE_TO.length);
    index++;
  }
  const chunks: PatchChunk[] = [];
  while (index < lines.length) {
    const current = lines[index] as string;
    if (current.trim() === '') {
      index++;
      continue;
    }
    if (current.startsWith('*')) break;
    const { chunk, consumed } = parseChunk(lines, index, line + (index - start), chunks.length === 0);
    chunks.push(chunk);
    index += consumed;
  }
  if (chunks.length === 0) throw invalidHunk(`Update file hunk for path '${path}' is empty`, line);
  return { hunk: { kind: 'update', path, movePath, chunks }, consumed: index - start };
}

function parseChunk(
  lines: string[],
  start: number,
  line: number,
  contextMayBeMissing: boolean,
): { chunk: PatchChunk; consumed: number } {
  const first = lines[start] as string;
  let context: string | null = null;
  let bodyStart = start;
  if (first === BARE_CONTEXT) {
    bodyStart++;
  } else if (first.startsWith(CONTEXT)) {
    context = first.slice(CONTEXT.length);
    bodyStart++;
  } else if (!contextMayBeMissing) {
    throw invalidHunk(`Expected update hunk to start with a @@ context marker, got: '${first}'`, line);
  }
  if (bodyStart >= lines.length) throw invalidHunk(NO_LINES, line + 1);
  const chunk: PatchChunk = { context, oldLines: [], newLines: [], keptFrom: [], endOfFile: false };
  let parsed = 0;
  for (let index = bodyStart; index < lines.length; index++) {
    const current = lines[index] as string;
    if (current === END_OF_FILE) {
      if (parsed === 0) throw invalidHunk(NO_LINES, line + 1);
      chunk.endOfFile = true;
      parsed++;
      break;
    }
    const marker = current.charAt(0);
    const text = current.slice(1);
    if (current === '' || marker === ' ') {
      chunk.keptFrom.push(chunk.oldLines.length);
      chunk.oldLines.push(text);
      chunk.newLines.push(text);
    } else if (marker === '+') {
      chunk.keptFrom.push(null);
      chunk.newLines.push(text);
    } else if (marker === '-') {
      chunk.oldLines.push(text);
    } else {
      if (parsed === 0) {
        throw invalidHunk(
          `Unexpected line found in update hunk: '${current}'. Every line should start with ' ' (context line), '+' (added line), or '-' (removed line)`,
          line + 1,
        );
      }
      break;
    }
    parsed++;
  }
  return { chunk, consumed: parsed + (bodyStart - start) };
}
