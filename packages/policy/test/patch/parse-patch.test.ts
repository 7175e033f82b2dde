import { describe, expect, it } from 'vitest';
import { applyChunks } from '../../src/patch/apply-chunks.js';
import { parsePatch } from '../../src/patch/parse-patch.js';

function refusal(patch: string): { message: string; kind: string; line: unknown } {
  try {
    parsePatch(patch);
  } catch (error) {
    const fsError = error as { message: string; kind: string; extra?: { line?: number } };
    return { message: fsError.message, kind: fsError.kind, line: fsError.extra?.line };
  }
  throw new Error('expected a refusal');
}

describe('parsePatch refusals (each with the reference message and line)', () => {
  it('a missing Begin marker', () => {
    expect(refusal('hello')).toEqual({
      kind: 'patch_parse_error',
      message: "Invalid patch: The first line of the patch must be '*** Begin Patch'",
      line: undefined,
    });
  });
  it('a missing End marker', () => {
    expect(refusal('*** Begin Patch\nhello').message).toBe(
      "Invalid patch: The last line of the patch must be '*** End Patch'",
    );
  });
  it('an invalid hunk header, line 2', () => {
    const found = refusal('*** Begin Patch\n*** Frobnicate File: d\n*** End Patch');
    expect(found.line).toBe(2);
    expect(found.message).toMatch(
      /^Invalid patch hunk on line 2: '\*\*\* Frobnicate File: d' is not a valid hunk header/,
    );
  });
  it('an update hunk with no chunks, at its header line', () => {
    const found = refusal('*** Begin Patch\n*** Add File: a\n+a\n*** Update File: u.txt\n*** End Patch');
    expect(found).toMatchObject({
      line: 4,
      message: "Invalid patch hunk on line 4: Update file hunk for path 'u.txt' is empty",
    });
  });
  it('a chunk with no lines, at the line after its @@', () => {
    expect(refusal('*** Begin Patch\n*** Update File: u.txt\n@@\n*** End Patch')).toMatchObject({
      line: 4,
      message: 'Invalid patch hunk on line 4: Update hunk does not contain any lines',
    });
  });
  it('an unexpected first line in a chunk', () => {
    expect(refusal('*** Begin Patch\n*** Update File: u.txt\n@@\nxfoo\n*** End Patch').message).toContain(
      "Unexpected line found in update hunk: 'xfoo'",
    );
  });
  it('a second chunk without @@', () => {
    expect(refusal('*** Begin Patch\n*** Update File: u\n@@\n-a\n+b\nqq\n*** End Patch').message).toMatch(
      /Expected update hunk to start with a @@ context marker|Unexpected line/,
    );
  });
});

describe('parsePatch tolerance', () => {
  it('padded Begin/End markers and file headers, CRLF patch lines, a heredoc wrapper', () => {
    expect(parsePatch('  *** Begin Patch \r\n  *** Add File: a.txt  \r\n+x\r\n *** End Patch ')).toEqual([
      { kind: 'add', path: 'a.txt', contents: 'x\n' },
    ]);
    expect(parsePatch("<<'EOF'\n*** Begin Patch\n*** Delete File: d\n*** End Patch\nEOF")).toEqual([
      { kind: 'delete', path: 'd' },
    ]);
  });
  it('a padded @@ is a context line, as in the reference', () => {
    const [hunk] = parsePatch('*** Begin Patch\n*** Update File: u\n  @@\n-a\n*** End Patch');
    expect(hunk).toMatchObject({ chunks: [{ context: null, oldLines: [' @@', 'a'] }] });
  });
  it('an empty patch parses to no hunks (the assessment rejects it)', () => {
    expect(parsePatch('*** Begin Patch\n*** End Patch')).toEqual([]);
  });
});

describe('applyChunks', () => {
  const chunks = (patch: string) => {
    const [hunk] = parsePatch(`*** Begin Patch\n*** Update File: f\n${patch}\n*** End Patch`);
    if (hunk?.kind !== 'update') throw new Error('not an update');
    return hunk.chunks;
  };
  it('keeps a CRLF file CRLF and appends the final newline', () => {
    expect(applyChunks('a\r\nb', chunks('@@\n-a\n+A'), 'f')).toBe('A\r\nb\r\n');
  });
  it('a pure addition goes at the end; End of File anchors at the end', () => {
    expect(applyChunks('1\n2\n', chunks('@@\n+3'), 'f')).toBe('1\n2\n3\n');
    expect(applyChunks('x\nend\nend\n', chunks('@@\n-end\n+END\n*** End of File'), 'f')).toBe(
      'x\nend\nEND\n',
    );
  });
  it('missing lines are a patch_conflict naming file and chunk', () => {
    expect(() => applyChunks('a\n', chunks('@@\n-a\n+b\n@@\n-zz\n+y'), '/w/f')).toThrow(
      expect.objectContaining({ kind: 'patch_conflict', extra: { path: '/w/f', chunk: 2 } }),
    );
  });
});
