import { LIMITS, progressLine, TEMP_TAG, toWireError } from '@fs-sandbox/policy/core';
import { encodeReply } from './framing.js';
import { checkMountPoints } from './freshness.js';
import { useSynchronousCalls } from './fs-async.js';
import { closeInheritedDescriptors } from './inherited-descriptors.js';
import { LANDLOCK_SETUP_FAILED } from './landlock-exit.js';
import { parseProgramArgs } from './program-args.js';
import type { HelperReply } from './protocol.js';
import { runRequest } from './run-request.js';
import { readRequest, writeAll } from './stdio.js';
import { tagTemporaryNames } from './temp-name.js';
import type { ProgressSink } from './tree-progress-counter.js';
import { rehearse } from './warm-up.js';

/**
 * The helper program: one request from stdin, one reply on stdout, exit 0. Only when the protocol
 * itself fails (unreadable or malformed input, a reply that cannot be written) does it exit 1 with
 * one line on stderr. Nothing else is ever written to stdout: the broker parses all of it.
 */

const STDIN = 0;
const STDOUT = 1;
const STDERR = 2;
/** At most one progress line this often: the broker only shows it, and each one is a write(2). */
const PROGRESS_INTERVAL_MS = 200;

function fail(error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`fs-sandbox helper: protocol failure: ${message.replace(/\s+/g, ' ')}\n`);
  process.exitCode = 1;
}

/** The request's reply, unless a mount the launcher made has gone since (a stale warm helper). */
async function answer(request: Record<string, unknown>, expectedMounts: string[]): Promise<HelperReply> {
  try {
    // Checked after the request arrived, not at start-up: a warm helper may have waited a while.
    checkMountPoints(expectedMounts);
  } catch (error) {
    return { status: 'error', payload: toWireError(error) };
  }
  return runRequest(request, request.progress === true ? { onProgress: stderrProgress() } : {});
}

/** Progress of a long tree operation as lines on stderr, which the broker reads while it waits. */
function stderrProgress(): ProgressSink {
  let last = 0;
  return (progress) => {
    const now = Date.now();
    if (progress.phase !== 'total' && now - last < PROGRESS_INTERVAL_MS) return;
    last = now;
    writeAll(STDERR, [Buffer.from(progressLine(progress))]);
  };
}

/** `--pty`: a command on a terminal inside the sandbox, not a file operation (pty-launcher.ts). */
async function runTerminal(args: string[]): Promise<void> {
  try {
    const { runOnTerminal } = await import('./pty-launcher.js');
    // Exits at once: stdin (the broker's frames) may still be open, and the output is all written.
    process.exit(await runOnTerminal(args));
  } catch (error) {
    fail(error);
  }
}

/**
 * `--landlock`: the Landlock backend's launcher (landlock-launcher.ts): restricts this process,
 * then executes the helper or a command in it. Nothing inherited is closed here: the launch's
 * inputs are read first, and the program it executes closes its own (the helper) or gets the
 * broker's masks (a command's spawn covers the broker's descriptors with /dev/null).
 */
async function runLandlock(args: string[]): Promise<void> {
  try {
    const { runLandlocked } = await import('./landlock-launcher.js');
    await runLandlocked(args);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`fs-sandbox landlock: ${message.replace(/\s+/g, ' ')}\n`);
    process.exit(LANDLOCK_SETUP_FAILED);
  }
}

async function main(): Promise<void> {
  if (process.argv[2] === '--landlock') {
    await runLandlock(process.argv.slice(3));
    return;
  }
  if (process.argv[2] === '--pty') {
    closeInheritedDescriptors();
    await runTerminal(process.argv.slice(3));
    return;
  }
  let request: Record<string, unknown>;
  let expectedMounts: string[];
  try {
    // First of all: no operation, not even the warm-up rehearsal, may see an inherited descriptor.
    closeInheritedDescriptors();
    useSynchronousCalls();
    const args = parseProgramArgs(process.argv.slice(2));
    expectedMounts = args.expectedMounts;
    if (args.warmUp) await rehearse(expectedMounts);
    request = readRequest(STDIN, LIMITS.helperMaxRequestBytes);
    if (typeof request.tempTag === 'string' && TEMP_TAG.test(request.tempTag))
      tagTemporaryNames(request.tempTag);
  } catch (error) {
    fail(error);
    return;
  }
  const reply = await answer(request, expectedMounts);
  try {
    writeAll(STDOUT, encodeReply(reply));
  } catch (error) {
    fail(error);
  }
}

main().catch(fail);
