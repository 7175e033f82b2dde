import { FsError } from '@fs-sandbox/policy';
import { describe, expect, it } from 'vitest';
import { applyLooseEdits, fencedDiff } from '../src/mcp/text-edits.js';

describe('applyLooseEdits (the reference edit_file matching)', () => {
  it('replaces the first exact occurrence only, in edit order', () => {
    expect(applyLooseEdits('a b a\n', [{ oldText: 'a', newText: 'x' }])).toBe('x b a\n');
    expect(
      applyLooseEdits('one\ntwo\n', [
        { oldText: 'one', newText: 'two' },
        { oldText: 'two\ntwo', newText: 'both' },
      ]),
    ).toBe('both\n');
  });

  it('takes a replacement literally ($& and $1 are text)', () => {
    expect(applyLooseEdits('price\n', [{ oldText: 'price', newText: '$& $1' }])).toBe('$& $1\n');
  });

  it('matches lines whatever their surrounding whitespace, re-indented to the file', () => {
    const file = 'fn() {\n    a();\n      b();\n}\n';
    const edited = applyLooseEdits(file, [{ oldText: 'a();\n  b();', newText: 'c();\n    d();' }]);
    // The first line takes the file's indentation; the next keeps its indentation relative to oldText's.
    expect(edited).toBe('fn() {\n    c();\n      d();\n}\n');
  });

  it('compares CRLF edits as LF', () => {
    expect(applyLooseEdits('a\nb\n', [{ oldText: 'a\r\nb', newText: 'c\r\nd' }])).toBe('c\nd\n');
  });

  it('refuses the whole edit when one text is not found, naming it', () => {
    const attempt = () =>
      applyLooseEdits('a\n', [
        { oldText: 'a', newText: 'b' },
        { oldText: 'zzz', newText: 'y' },
      ]);
    expect(attempt).toThrow(FsError);
    expect(attempt).toThrow('Could not find exact match for edit:\nzzz');
  });
});

describe('fencedDiff', () => {
  it('is a git-style diff in a diff fence', () => {
    const text = fencedDiff('a\n', 'b\n', '/w/f.txt');
    expect(text).toBe(
      '```diff\nIndex: /w/f.txt\n===================================================================\n--- /w/f.txt\toriginal\n+++ /w/f.txt\tmodified\n@@ -1,1 +1,1 @@\n-a\n+b\n```\n\n',
    );
  });

  it('makes its fence longer than any backtick run in the diff', () => {
    const text = fencedDiff('x\n', '````\n', 'f');
    expect(text.startsWith('`````diff\n')).toBe(true);
    expect(text.endsWith('\n`````\n\n')).toBe(true);
  });
});
