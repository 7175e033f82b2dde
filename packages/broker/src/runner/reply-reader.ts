import type { HelperOkReply, HelperReply, ReplyBinaryField } from '@fs-sandbox/helper';
import { FsError, isErrorKind, isHelperMethod } from '@fs-sandbox/policy';

/**
 * Collects one helper reply from stdout: a JSON line, then for reads exactly `binary.length` raw
 * bytes. Everything is bounded by `maxBytes`; the raw bytes are copied straight into one buffer of
 * the announced size (never concatenated twice, never turned into a string).
 */
export class ReplyReader {
  private readonly headerChunks: Uint8Array[] = [];
  private headerBytes = 0;
  private total = 0;
  private header: { reply: HelperReply; binaryLength: number } | null = null;
  private binary: Buffer | null = null;
  private binaryFilled = 0;

  constructor(private readonly maxBytes: number) {}

  /** Takes the next stdout chunk; throws an FsError as soon as the reply cannot be valid. */
  push(chunk: Buffer): void {
    this.total += chunk.byteLength;
    if (this.total > this.maxBytes) {
      throw new FsError('internal_error', `helper reply exceeds the limit of ${this.maxBytes} bytes`);
    }
    if (this.header === null) {
      const newline = chunk.indexOf(0x0a);
      if (newline === -1) {
        this.headerChunks.push(view(chunk));
        this.headerBytes += chunk.byteLength;
        return;
      }
      this.headerChunks.push(view(chunk.subarray(0, newline)));
      this.header = parseHeader(Buffer.concat(this.headerChunks, this.headerBytes + newline));
      this.headerChunks.length = 0;
      // The announced length is checked before anything is allocated for it.
      if (this.headerBytes + newline + 1 + this.header.binaryLength > this.maxBytes) {
        throw new FsError('internal_error', `helper reply exceeds the limit of ${this.maxBytes} bytes`);
      }
      if (this.header.binaryLength > 0) this.binary = Buffer.allocUnsafe(this.header.binaryLength);
      chunk = chunk.subarray(newline + 1);
    }
    if (chunk.byteLength === 0) return;
    const room = this.header.binaryLength - this.binaryFilled;
    if (this.binary === null || chunk.byteLength > room) {
      throw new FsError('internal_error', 'helper reply has bytes after its announced end');
    }
    this.binary.set(chunk, this.binaryFilled);
    this.binaryFilled += chunk.byteLength;
  }

  /** True once the JSON line and every announced byte have arrived. */
  get complete(): boolean {
    return this.header !== null && this.binaryFilled === this.header.binaryLength;
  }

  /** The complete reply, once stdout has ended. */
  finish(): HelperReply {
    if (this.header === null) {
      throw new FsError(
        'internal_error',
        this.total === 0 ? 'helper exited without a reply' : 'helper reply is not terminated by a newline',
      );
    }
    const { reply, binaryLength } = this.header;
    if (this.binaryFilled !== binaryLength) {
      throw new FsError(
        'internal_error',
        `helper reply is truncated: ${this.binaryFilled} of ${binaryLength} bytes`,
      );
    }
    if (reply.status === 'ok' && reply.binary !== undefined) {
      reply.binary.data = this.binary ?? Buffer.alloc(0);
    }
    return reply;
  }
}

function parseHeader(line: Buffer): { reply: HelperReply; binaryLength: number } {
  let value: unknown;
  try {
    value = JSON.parse(line.toString('utf8'));
  } catch {
    throw invalid('it is not JSON');
  }
  if (!isRecord(value) || !isRecord(value.payload)) throw invalid('it has no payload object');
  const payload = value.payload;
  if (value.status === 'error') {
    const data = payload.data;
    if (typeof payload.code !== 'number' || typeof payload.message !== 'string' || !isRecord(data)) {
      throw invalid('its error has no code, message or data');
    }
    if (!isErrorKind(data.errorKind))
      throw invalid(`its error kind ${JSON.stringify(data.errorKind)} is unknown`);
    const error = {
      code: payload.code,
      message: payload.message,
      data: { ...data, errorKind: data.errorKind },
    };
    return { reply: { status: 'error', payload: error }, binaryLength: 0 };
  }
  if (value.status !== 'ok') throw invalid('its status is neither ok nor error');
  if (
    typeof payload.operation !== 'string' ||
    !isHelperMethod(payload.operation) ||
    !isRecord(payload.response)
  ) {
    throw invalid('its payload has no known operation or no response');
  }
  // The response's shape is the helper's own code's (its operation modules are typed by the method table).
  const ok = { operation: payload.operation, response: payload.response } as HelperOkReply['payload'];
  if (value.binary === undefined) return { reply: { status: 'ok', payload: ok }, binaryLength: 0 };
  const binary = value.binary;
  if (
    !isRecord(binary) ||
    (binary.field !== 'dataBase64' && binary.field !== 'chunk') ||
    !Number.isSafeInteger(binary.length) ||
    (binary.length as number) < 0
  ) {
    throw invalid('its binary trailer header is malformed');
  }
  const field = binary.field as ReplyBinaryField;
  return {
    reply: { status: 'ok', payload: ok, binary: { field, data: Buffer.alloc(0) } },
    binaryLength: binary.length as number,
  };
}

/** A plain Uint8Array view (@types/node 20's Buffer is not assignable to TS 5.9's generic Uint8Array). */
function view(buffer: Buffer): Uint8Array {
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

function invalid(why: string): FsError {
  return new FsError('internal_error', `helper reply is unusable: ${why}`);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
