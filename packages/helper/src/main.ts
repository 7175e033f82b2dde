import { LIMITS } from '@fs-sandbox/policy/core';
import { encodeReply } from './framing.js';
import { runRequest } from './run-request.js';
import { readRequest, writeAll } from './stdio.js';

/**
 * The helper program: one request from stdin, one reply on stdout, exit 0. Only when the protocol
 * itself fails (unreadable or malformed input, a reply that cannot be written) does it exit 1 with
 * one line on stderr. Nothing else is ever written to stdout: the broker parses all of it.
 */

const STDIN = 0;
const STDOUT = 1;

function fail(error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`fs-sandbox helper: protocol failure: ${message.replace(/\s+/g, ' ')}\n`);
  process.exitCode = 1;
}

async function main(): Promise<void> {
  let request: Record<string, unknown>;
  try {
    request = readRequest(STDIN, LIMITS.helperMaxRequestBytes);
  } catch (error) {
    fail(error);
    return;
  }
  const reply = await runRequest(request);
  try {
    writeAll(STDOUT, encodeReply(reply));
  } catch (error) {
    fail(error);
  }
}

main().catch(fail);
