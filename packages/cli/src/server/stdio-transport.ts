import type { Readable, Writable } from 'node:stream';
import { LineSplitter } from '@fs-sandbox/broker/internal';
import { COALESCED_BYTES, ReplyPump } from './reply-pump.js';
import type { ReplyOutput, RpcConnection } from './rpc-connection.js';

const NEWLINE = Buffer.from('\n');

/**
 * Newline-delimited JSON over a pair of streams (the process's stdin/stdout). End of input is a
 * half-close: the client may still be reading, so accepted requests finish and are answered before
 * the connection closes. An output error (EPIPE: the reader is gone) closes at once, aborting
 * running calls. Reading pauses while the output is backed up, so a client that sends without
 * reading cannot grow our reply buffer without bound.
 */
export function serveStdio(
  input: Readable,
  output: Writable,
  maxMessageBytes: number,
  open: (output: ReplyOutput) => RpcConnection,
): Promise<void> {
  return new Promise((resolve) => {
    let finished = false;
    const pump = new ReplyPump({
      write(part, last) {
        // A small reply and its newline are one write (one wake-up of the client); a large part is
        // never copied to add one.
        if (last && part.length < COALESCED_BYTES) output.write(Buffer.concat([part, NEWLINE]));
        else {
          output.write(part);
          if (last) output.write(NEWLINE);
        }
        return !output.writableNeedDrain;
      },
      async waitForRoom() {
        input.pause();
        await new Promise<void>((room) => {
          const done = () => {
            output.off('drain', done);
            output.off('close', done);
            room();
          };
          output.once('drain', done);
          output.once('close', done);
        });
        if (!finished) input.resume();
      },
      get closed() {
        return output.destroyed || output.writableEnded;
      },
    });
    const connection = open(pump);
    const finish = () => {
      if (finished) return;
      finished = true;
      input.off('data', onData);
      void connection.close().then(resolve);
    };
    const splitter = new LineSplitter(maxMessageBytes, {
      line: (bytes) => connection.receive(bytes),
      oversized: (bytes) => connection.receiveOversized(bytes),
    });
    const onData = (chunk: Buffer | string) =>
      splitter.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    input.on('data', onData);
    input.once('end', () => {
      splitter.end();
      void connection
        .drain()
        .then(() => pump.whenIdle())
        .then(finish);
    });
    input.on('error', finish);
    output.on('error', finish);
    output.once('close', finish);
  });
}
