import {
  TERMINAL_FRAME,
  TERMINAL_FRAME_HEADER_BYTES,
  TERMINAL_FRAME_MAX_BYTES,
} from '@fs-sandbox/policy/core';
import { writeAll } from './stdio.js';

/**
 * The helper's `--pty ROWS COLS -- ARGV…` mode: runs a command on a pseudo-terminal allocated here,
 * inside the sandbox, with Bun's terminal API (the terminal comes from the sandbox's own devpts;
 * the command becomes the leader of a new session with it as controlling terminal). Its output is
 * written to stdout as it comes; stdin carries the broker's frames (policy terminal-frames.ts):
 * input, a resize, the end of input. The launcher exits with the command's exit code, or 128 + the
 * signal that ended it, once the terminal's last output is written.
 *
 * Only the Bun helper runs this (the broker refuses `tty` with the node helper); it is loaded only
 * when asked for, so a file operation's start-up never pays for it.
 */

interface BunTerminal {
  write(data: Uint8Array | string): void;
  resize(cols: number, rows: number): void;
  close(): void;
}
interface BunSubprocess {
  readonly terminal: BunTerminal;
  readonly exited: Promise<number>;
  readonly signalCode: string | null;
}
interface BunRuntime {
  spawn(
    argv: string[],
    options: {
      terminal: { cols: number; rows: number; data(terminal: unknown, bytes: Uint8Array): void };
      env: Record<string, string | undefined>;
    },
  ): BunSubprocess;
}

const STDOUT = 1;
/** The terminal's end-of-file character (^D) in its default (canonical) mode. */
const END_OF_FILE = '\x04';
/** How long output may still arrive after the exit before the launcher stops waiting for it. */
const OUTPUT_SETTLE_MS = 50;

export async function runOnTerminal(args: readonly string[]): Promise<number> {
  const [rowsText, colsText, separator, ...argv] = args;
  const rows = Number(rowsText);
  const cols = Number(colsText);
  if (separator !== '--' || argv.length === 0 || !validSize(rows) || !validSize(cols))
    throw new Error('usage: --pty ROWS COLS -- COMMAND [ARGS…]');
  const bun = (globalThis as { Bun?: BunRuntime }).Bun;
  if (bun === undefined) throw new Error('this runtime has no terminal support (the Bun helper has)');
  let lastOutput = Date.now();
  const child = bun.spawn(argv, {
    terminal: {
      rows,
      cols,
      data(_terminal, bytes) {
        lastOutput = Date.now();
        writeAll(STDOUT, [Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)]);
      },
    },
    env: process.env,
  });
  void forwardFrames(child.terminal);
  const code = await child.exited;
  // The terminal's last output may be delivered just after the exit.
  while (Date.now() - lastOutput < OUTPUT_SETTLE_MS) await new Promise((done) => setTimeout(done, 10));
  child.terminal.close();
  return child.signalCode === null ? code : 128 + signalNumber(child.signalCode);
}

function validSize(value: number): boolean {
  return Number.isInteger(value) && value > 0 && value <= 65_535;
}

/** Reads the broker's frames from stdin until it ends; a malformed frame ends the input. */
async function forwardFrames(terminal: BunTerminal): Promise<void> {
  let pending = Buffer.alloc(0);
  for await (const chunk of process.stdin) {
    pending = Buffer.concat([pending, chunk as Buffer]);
    while (pending.length >= TERMINAL_FRAME_HEADER_BYTES) {
      const length = pending.readUInt32BE(1);
      if (length > TERMINAL_FRAME_MAX_BYTES) return;
      if (pending.length < TERMINAL_FRAME_HEADER_BYTES + length) break;
      const type = pending.readUInt8(0);
      const payload = pending.subarray(TERMINAL_FRAME_HEADER_BYTES, TERMINAL_FRAME_HEADER_BYTES + length);
      pending = pending.subarray(TERMINAL_FRAME_HEADER_BYTES + length);
      if (type === TERMINAL_FRAME.input) terminal.write(payload);
      else if (type === TERMINAL_FRAME.resize && payload.length === 4)
        terminal.resize(payload.readUInt16BE(2), payload.readUInt16BE(0));
      else if (type === TERMINAL_FRAME.endOfInput) terminal.write(END_OF_FILE);
      else return;
    }
  }
}

const SIGNALS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 };

function signalNumber(name: string): number {
  return SIGNALS[name] ?? 0;
}
