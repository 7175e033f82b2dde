import { toWireError, type WireError } from '@fs-sandbox/policy';
import { escapeForTerminal, terminalSafeJson } from './terminal-text.js';

/** Bytes per base64 slice; a multiple of 3 so no slice is padded in the middle of the output. */
const BASE64_SLICE_BYTES = 3 * 1024 * 1024;

/**
 * Prints an operation result as one JSON line. Binary fields (readFile's `dataBase64`) arrive as
 * Buffers at the top level of the result and are written base64 slice by slice: the base64 of a
 * large file does not fit in one JavaScript string.
 */
export function writeResultJson(out: NodeJS.WritableStream, result: unknown): void {
  if (result === null || typeof result !== 'object' || Array.isArray(result)) {
    out.write(`${terminalSafeJson(JSON.stringify(result))}\n`);
    return;
  }
  out.write('{');
  let first = true;
  for (const [key, value] of Object.entries(result)) {
    out.write(`${first ? '' : ','}${terminalSafeJson(JSON.stringify(key))}:`);
    first = false;
    if (value instanceof Uint8Array) writeBase64String(out, value);
    else out.write(terminalSafeJson(JSON.stringify(value)));
  }
  out.write('}\n');
}

function writeBase64String(out: NodeJS.WritableStream, bytes: Uint8Array): void {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  out.write('"');
  for (let offset = 0; offset < buffer.byteLength; offset += BASE64_SLICE_BYTES) {
    out.write(buffer.subarray(offset, offset + BASE64_SLICE_BYTES).toString('base64'));
  }
  out.write('"');
}

/** The `call` command's error form, `{"error":{"code","message","data":{"errorKind"}}}`, of a wire error. */
export function writeWireErrorJson(out: NodeJS.WritableStream, error: WireError): void {
  out.write(`${terminalSafeJson(JSON.stringify({ error }))}\n`);
}

/**
 * Wire wording that is advice about a wire field, in the words of the CLI flag that does the same.
 * Each text names its operation (only `rm` sends fs/remove, only `cp` fs/copy, only `mkdir`
 * fs/createDirectory, only `mv` fs/rename), so the advice fits
 * whichever command printed it. The wire message itself never changes; only this rendering does.
 */
const CLI_WORDING: readonly { wire: RegExp; cli: (match: RegExpExecArray) => string }[] = [
  {
    wire: /\(pass recursive: true to remove it with its contents\)$/,
    cli: () => '(use rm -r to remove it with its contents)',
  },
  {
    wire: /; pass recursive: true to create it\)$/,
    cli: () => '; use mkdir -p to create it)',
  },
  {
    wire: /^fs\/copy requires recursive: true when sourcePath is a directory$/,
    cli: () => 'the source is a directory; use cp -r to copy it',
  },
  {
    wire: /^fs\/readTextFile takes one window: .+ cannot be combined$/,
    cli: () => 'give one of --line/--limit, --head or --tail',
  },
  {
    wire: /^edits\[0\]\.oldText (occurs .*); give more context or set replaceAll$/,
    cli: (match) => `the --old text ${match[1]}; give more context or use edit --all`,
  },
  {
    wire: /^edits\[0\]\.oldText (was not found .*|is empty: name the text to replace)$/s,
    cli: (match) => `the --old text ${match[1]}`,
  },
  {
    wire: /\(pass overwrite: true to replace it\)$/,
    cli: () => '(use mv --force to replace it)',
  },
  {
    wire: /^invalid URI: relative URL without a base$/,
    cli: (match) => `${match[0]}; write it as a file: URI, e.g. file:///abs/path`,
  },
];

/** The wire message in CLI words where it is advice about a flag; otherwise unchanged. */
export function cliWording(message: string): string {
  for (const { wire, cli } of CLI_WORDING) {
    const match = wire.exec(message);
    if (match)
      return `${message.slice(0, match.index)}${cli(match)}${message.slice(match.index + match[0].length)}`;
  }
  return message;
}

/**
 * `fs-sandbox: <message> [<kind>]`, the message `call` prints as JSON (in CLI words where it gives
 * advice about a flag, see cliWording) and the same kind. Raw: messages name paths, so print it
 * through an escaper.
 */
export function describeError(error: unknown): string {
  const { message, data } = toWireError(error);
  return `fs-sandbox: ${cliWording(message)} [${data.errorKind}]`;
}

/**
 * For `call`, whose stdout is the exact wire error: the human line on stderr when the CLI words
 * add something (null otherwise), safe for a terminal.
 */
export function callErrorHint(error: WireError): string | null {
  const words = cliWording(error.message);
  if (words === error.message) return null;
  const field = typeof error.data.field === 'string' ? `\`${error.data.field}\`: ` : '';
  return `${escapeForTerminal(`fs-sandbox: ${field}${words} [${error.data.errorKind}]`)}\n`;
}

/** The one-line human message a command prints on stderr for a failure, safe for a terminal. */
export function humanError(error: unknown): string {
  return `${escapeForTerminal(describeError(error))}\n`;
}

/** The `--json` flag of the human verbs: print the exact wire result instead of the human form. */
export function addJsonOption<C extends { option(flags: string, description: string): C }>(command: C): C {
  return command.option('--json', 'print the exact wire result as one JSON line (for machines)');
}
