import { FsError } from '@fs-sandbox/policy';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { humanError } from '../src/cli/json-output.js';
import { formatTable } from '../src/cli/table.js';
import {
  ansiCQuote,
  escapeForTerminal,
  hasTerminalControls,
  terminalSafeJson,
} from '../src/cli/terminal-text.js';

/** C0, DEL, C1 and the bidi embeddings, overrides and isolates: what must never be printed raw. */
function rawControls(text: string): string[] {
  return [...text].filter((char) => {
    const code = char.codePointAt(0) as number;
    return (
      code <= 0x1f ||
      (code >= 0x7f && code <= 0x9f) ||
      (code >= 0x202a && code <= 0x202e) ||
      (code >= 0x2066 && code <= 0x2069)
    );
  });
}

/** The inverse of escapeForTerminal, to show that no two texts print the same. */
function decodeEscapes(text: string): string {
  return text.replace(/\\(\\|x([0-9a-f]{2})|u\{([0-9a-f]+)\})/g, (_match, sequence: string, byte, point) => {
    if (sequence === '\\') return '\\';
    return String.fromCodePoint(Number.parseInt(byte ?? point, 16));
  });
}

/** Strings that favour the characters the escaper handles, mixed with anything else. */
const hostileText = fc
  .array(
    fc.oneof(
      fc.constantFrom('\u001b[2J', '\u001b]52;c;aGk=\u0007', '\n', '\r', '\\', '\\x1b', '\u009b', '\u007f'),
      fc.constantFrom('\u202a', '\u202e', '\u2066', '\u2069', '\u200f', 'é', '日本', '😀'),
      fc.string({ unit: 'binary', maxLength: 8 }),
    ),
    { maxLength: 12 },
  )
  .map((parts) => parts.join(''));

describe('escapeForTerminal', () => {
  it('writes controls as \\xNN, bidi controls as \\u{NNNN} and a backslash as \\\\', () => {
    expect(escapeForTerminal('clear\u001b[2J')).toBe('clear\\x1b[2J');
    expect(escapeForTerminal('clip\u001b]52;c;aGVsbG8=\u0007')).toBe('clip\\x1b]52;c;aGVsbG8=\\x07');
    expect(escapeForTerminal('two\nlines\r\t')).toBe('two\\x0alines\\x0d\\x09');
    expect(escapeForTerminal('\u0000\u007f\u0080\u009b\u009f')).toBe('\\x00\\x7f\\x80\\x9b\\x9f');
    expect(escapeForTerminal('bidi\u202etxt.exe\u2066\u2069\u202a')).toBe(
      'bidi\\u{202e}txt.exe\\u{2066}\\u{2069}\\u{202a}',
    );
    expect(escapeForTerminal('C:\\w\\x1b')).toBe('C:\\\\w\\\\x1b');
  });

  it('leaves printable text alone, non-ASCII included', () => {
    const plain = '/home/me/café/日本語/😀 file (1).txt \u00a0\u00ff\u200f';
    expect(escapeForTerminal(plain)).toBe(plain);
  });

  it('never prints a control character and never prints two texts alike', () => {
    fc.assert(
      fc.property(hostileText, (text) => {
        const escaped = escapeForTerminal(text);
        expect(rawControls(escaped)).toEqual([]);
        expect(decodeEscapes(escaped)).toBe(text);
      }),
    );
  });
});

describe('terminalSafeJson', () => {
  it('writes what JSON.stringify leaves raw as \\u escapes, keeping the value exact', () => {
    expect(terminalSafeJson(JSON.stringify('a\u202eb\u009b\u007f\u001b'))).toBe(
      '"a\\u202eb\\u009b\\u007f\\u001b"',
    );
    fc.assert(
      fc.property(fc.array(hostileText, { maxLength: 4 }), (names) => {
        const json = terminalSafeJson(JSON.stringify({ entries: names.map((fileName) => ({ fileName })) }));
        expect(rawControls(json)).toEqual([]);
        expect(JSON.parse(json).entries.map((entry: { fileName: string }) => entry.fileName)).toEqual(names);
      }),
    );
  });
});

describe('ansiCQuote', () => {
  it('quotes a word for the shell with escapes the shell turns back into the same characters', () => {
    expect(ansiCQuote("/w/dir\u001b[31m it's\\")).toBe("$'/w/dir\\x1b[31m it\\'s\\\\'");
    expect(ansiCQuote('a\u009bb\u202ec')).toBe("$'a\\u009bb\\u202ec'");
    fc.assert(
      fc.property(hostileText, (word) => {
        expect(rawControls(ansiCQuote(word))).toEqual([]);
      }),
    );
  });

  it('is what hasTerminalControls calls for', () => {
    expect(hasTerminalControls('/w/plain\\path')).toBe(false);
    expect(hasTerminalControls('/w/\u2067')).toBe(true);
  });
});

describe('human output built on the escaper', () => {
  it('escapes error messages, which name paths', () => {
    const error = new FsError('not_found', 'No such file or directory: /w/\u001b[2Jx');
    expect(humanError(error)).toBe('fs-sandbox: No such file or directory: /w/\\x1b[2Jx [not_found]\n');
  });

  it('escapes table cells before lining the columns up', () => {
    expect(
      formatTable(
        ['check', 'detail'],
        [
          ['a\u001b', 'b\nc'],
          ['bb', 'd'],
        ],
      ),
    ).toBe(['check  detail', '-----  ------', 'a\\x1b  b\\x0ac', 'bb     d'].join('\n'));
  });
});
