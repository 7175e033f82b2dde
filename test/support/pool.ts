import { readFileSync } from 'node:fs';
import type { SandboxContextInput } from '@fs-sandbox/policy';
import { processesMatching } from './processes.js';

/**
 * Helpers for the warm-pool suites: finding the helper processes of one test (their command line
 * names its directory) and telling when a spare has finished starting.
 */

/** Either helper program: node's bundle or the compiled Bun helper. */
export const HELPER_BUNDLE = /\/helper(?:\.cjs|-bun)(?:\s|$)/;

/**
 * Helper programs of `needle` that are blocked in read(0, …): started, loaded, and waiting for
 * their request — a spare that is truly warm. (/proc/<pid>/syscall: number 0 is read, then fd.)
 */
export function waitingHelpers(needle: string): number[] {
  return processesMatching(needle)
    .filter((process) => HELPER_BUNDLE.test(process.cmdline))
    .map((process) => process.pid)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/syscall`, 'utf8').startsWith('0 0x0 ');
      } catch {
        return false;
      }
    });
}

function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}

/** Like waitingHelpers, for the helper program running under the launcher process `root`. */
export function waitingHelpersUnder(root: number): number[] {
  // The node bundle (helper/dist/helper.cjs) or the Bun executable (helper-<platform>/bin/helper-bun).
  return waitingHelpers('/helper').filter((pid) => {
    for (let current: number | null = pid; current !== null && current > 1; current = parentOf(current)) {
      if (current === root) return true;
    }
    return false;
  });
}

export async function until(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const entry = (path: string, access: 'read' | 'write' | 'deny') => ({
  path: { type: 'path', path: `file://${path}` },
  access,
});
const special = (kind: string, access: 'read' | 'write') => ({
  path: { type: 'special', value: { kind } },
  access,
});

/** A restricted context: `read`, `write` and `deny` paths, optionally with the whole disk readable. */
export function sandboxContext(options: {
  read?: string[];
  write?: string[];
  deny?: string[];
  readRoot?: boolean;
}): SandboxContextInput {
  const entries = [
    ...(options.readRoot ? [special('root', 'read')] : []),
    ...(options.read ?? []).map((path) => entry(path, 'read')),
    ...(options.write ?? []).map((path) => entry(path, 'write')),
    ...(options.deny ?? []).map((path) => entry(path, 'deny')),
  ];
  return {
    permissions: { type: 'managed', file_system: { type: 'restricted', entries }, network: 'restricted' },
    windowsSandboxLevel: 'disabled',
  } as SandboxContextInput;
}

export const uri = (path: string): string => `file://${path}`;

export const base64 = (text: string): string => Buffer.from(text).toString('base64');
