/**
 * How the broker talks to a command's pseudo-terminal: the terminal is allocated inside the
 * sandbox by the helper's `--pty` mode (packages/helper/src/pty-launcher.ts), whose stdin carries
 * frames, since input, a resize and the end of input must all travel over the one pipe bwrap
 * passes in. A frame is one type byte, a 32-bit big-endian length and that many bytes. The
 * terminal's output needs no framing: it is one stream, the launcher's stdout.
 */
export const TERMINAL_FRAME = {
  /** Bytes typed into the terminal. */
  input: 0,
  /** Four bytes: rows, then columns, each 16-bit big-endian. */
  resize: 1,
  /** The end of input: the terminal's end-of-file character is typed (as closing a PTY's stdin means). */
  endOfInput: 2,
} as const;

export const TERMINAL_FRAME_HEADER_BYTES = 5;

/** The largest payload of one frame the launcher accepts (larger input is split by the broker). */
export const TERMINAL_FRAME_MAX_BYTES = 1024 * 1024;

export function encodeTerminalFrame(type: number, payload: Uint8Array): Buffer {
  const frame = Buffer.alloc(TERMINAL_FRAME_HEADER_BYTES + payload.length);
  frame.writeUInt8(type, 0);
  frame.writeUInt32BE(payload.length, 1);
  frame.set(payload, TERMINAL_FRAME_HEADER_BYTES);
  return frame;
}

/** Bytes typed into a terminal, as frames the launcher accepts (each at most TERMINAL_FRAME_MAX_BYTES). */
export function terminalInputFrames(bytes: Buffer): Buffer[] {
  const frames: Buffer[] = [];
  for (let start = 0; start < bytes.length; start += TERMINAL_FRAME_MAX_BYTES) {
    frames.push(
      encodeTerminalFrame(TERMINAL_FRAME.input, bytes.subarray(start, start + TERMINAL_FRAME_MAX_BYTES)),
    );
  }
  return frames;
}
