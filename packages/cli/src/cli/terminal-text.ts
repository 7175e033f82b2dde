/**
 * Characters a terminal may act on instead of showing: C0 controls (ESC starts CSI and OSC
 * sequences, which clear the screen, set the title or write the clipboard; a newline forges a
 * line), DEL, C1 controls (U+0080–U+009F; some terminals take U+009B as CSI), and the bidi
 * embeddings, overrides and isolates, which reorder what follows them on screen.
 */
const UNSAFE = '\\u0000-\\u001f\\u007f-\\u009f\\u202a-\\u202e\\u2066-\\u2069';
const UNSAFE_CHARACTER = new RegExp(`[${UNSAFE}]`, 'u');
const UNSAFE_OR_BACKSLASH = new RegExp(`[\\\\${UNSAFE}]`, 'gu');
const EVERY_UNSAFE = new RegExp(`[${UNSAFE}]`, 'gu');
const UNSAFE_OR_QUOTING = new RegExp(`[\\\\'${UNSAFE}]`, 'gu');

const hex = (code: number, digits: number) => code.toString(16).padStart(digits, '0');

/** Whether the text holds a character that `escapeForTerminal` would rewrite (a backslash aside). */
export function hasTerminalControls(text: string): boolean {
  return UNSAFE_CHARACTER.test(text);
}

/**
 * Untrusted text (file names, paths, error messages) made safe to print for people, like `ls -b`:
 * a C0, DEL or C1 control becomes `\xNN`, a bidi control `\u{NNNN}`, and a backslash `\\`,
 * so printed text that reads `\x1b` was a backslash, an `x`, a `1` and a `b` only if it shows `\\x1b`.
 */
export function escapeForTerminal(text: string): string {
  return text.replace(UNSAFE_OR_BACKSLASH, (char) => {
    if (char === '\\') return '\\\\';
    const code = char.codePointAt(0) as number;
    return code <= 0xff ? `\\x${hex(code, 2)}` : `\\u{${hex(code, 4)}}`;
  });
}

/** Multi-line text whose line breaks are our own layout (a usage message, a Seatbelt profile). */
export function escapeLines(text: string): string {
  return text.split('\n').map(escapeForTerminal).join('\n');
}

/**
 * JSON text with the unsafe characters JSON.stringify leaves raw (DEL, C1, bidi) written as `\uNNNN`
 * escapes: the same JSON value, byte for byte safe on a terminal (JSON already escapes C0).
 */
export function terminalSafeJson(json: string): string {
  return json.replace(EVERY_UNSAFE, (char) => `\\u${hex(char.codePointAt(0) as number, 4)}`);
}

/**
 * A shell word in ANSI-C quoting (`$'…'`, understood by bash, zsh and ksh): unsafe characters as
 * escapes the shell turns back into exactly those characters, so a printed command stays both safe
 * to show and exact to paste.
 */
export function ansiCQuote(word: string): string {
  const body = word.replace(UNSAFE_OR_QUOTING, (char) => {
    if (char === '\\' || char === "'") return `\\${char}`;
    const code = char.codePointAt(0) as number;
    // `\xNN` would be a raw byte; above U+007F the shell needs the code point to emit its UTF-8.
    return code < 0x80 ? `\\x${hex(code, 2)}` : `\\u${hex(code, 4)}`;
  });
  return `$'${body}'`;
}
