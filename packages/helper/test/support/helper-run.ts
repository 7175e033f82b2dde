import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type HelperMethod, isHelperMethod, parseForHelper, resolveSandboxContext } from '@fs-sandbox/policy';
import {
  currentHostOs,
  EXECUTABLE_SURFACE,
  nativeToPathUri,
  type PathGuard,
  toWireError,
  type WireError,
} from '@fs-sandbox/policy/core';
import { afterEach, expect } from 'vitest';
import type { HelperReply } from '../../src/protocol.js';
import { type RunOptions, runRequest } from '../../src/run-request.js';

export const isLinux = process.platform === 'linux';
export const isPosix = process.platform !== 'win32';
export const isRoot = process.getuid?.() === 0;

const created: string[] = [];

afterEach(() => {
  // `rm -rf` walks with openat, so even the 5 000-level trees some tests build are removed.
  for (const dir of created.splice(0)) execFileSync('rm', ['-rf', dir]);
}, 120_000);

/** A fresh temporary directory, removed after the test. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fs-helper-'));
  created.push(dir);
  return dir;
}

/** A file with `content` in a fresh temporary directory. */
export function fileWith(content: string | Uint8Array, name = 'f.txt'): string {
  const path = join(tempDir(), name);
  writeFileSync(path, content);
  return path;
}

export function uri(path: string): string {
  return nativeToPathUri(path, 'linux');
}

/** Run options plus the path guard the broker would send with a sandboxed request. */
export interface CallOptions extends RunOptions {
  guard?: PathGuard;
}

/**
 * Runs an operation the way the broker drives the helper: `params` are wire params (URIs, base64,
 * optional flags left out), parsed and converted by the policy package exactly as the broker does,
 * and a refusal there comes back as the error reply the broker would turn it into.
 */
export async function call(
  operation: string,
  params: Record<string, unknown>,
  options: CallOptions = {},
): Promise<HelperReply> {
  const { guard, ...runOptions } = options;
  if (!isHelperMethod(operation)) return runRequest({ operation, params }, runOptions);
  const os = runOptions.os ?? currentHostOs();
  let request: Record<string, unknown>;
  try {
    const parsed = parseForHelper(operation as HelperMethod, params, os);
    const sandboxed = resolveSandboxContext(parsed.sandbox, os).sandboxed;
    request = {
      operation,
      params: parsed.params,
      ...(sandboxed ? { sandboxed } : {}),
      ...(guard ? { guard } : {}),
    };
  } catch (error) {
    return { status: 'error', payload: toWireError(error) };
  }
  return runRequest(request, runOptions);
}

/** A guard that lets writes happen anywhere below `root` (a test's temporary directory). */
export function writableGuard(root: string): PathGuard {
  return {
    entries: [{ path: realpathSync(root), reason: 'writable_root', rule: 'writable root' }],
    denyGlobs: [],
    deniedIdentities: [],
    surface: { entries: [...EXECUTABLE_SURFACE], home: null },
  };
}

/** Runs an operation that must succeed and returns its response (and binary bytes, if any). */
export async function ok(
  operation: string,
  params: Record<string, unknown>,
  options?: CallOptions,
): Promise<{ response: Record<string, unknown>; data: Buffer | undefined }> {
  const reply = await call(operation, params, options);
  if (reply.status !== 'ok') throw new Error(`expected success, got ${JSON.stringify(reply.payload)}`);
  return { response: reply.payload.response, data: reply.binary?.data };
}

/** Runs an operation that must fail and returns the wire error. */
export async function fails(
  operation: string,
  params: Record<string, unknown>,
  options?: CallOptions,
): Promise<WireError> {
  const reply = await call(operation, params, options);
  if (reply.status !== 'error') throw new Error(`expected an error, got ${JSON.stringify(reply.payload)}`);
  return reply.payload;
}

export function expectKind(error: WireError, kind: string, code: number): void {
  expect(error.data.errorKind).toBe(kind);
  expect(error.code).toBe(code);
}

/** Names of leftover temp files (the atomic writer's `.fs-sandbox-*.tmp`) in a directory. */
export function tempLeftovers(dir: string): string[] {
  return readdirSync(dir).filter((name) => name.startsWith('.fs-sandbox-'));
}

/** A restricted managed sandbox context, as the broker passes it (the helper only needs to see that it is restricted). */
export const RESTRICTED_SANDBOX = {
  permissions: {
    type: 'managed',
    file_system: { type: 'restricted', entries: [] },
    network: 'restricted',
  },
  windowsSandboxLevel: 'disabled',
};

/**
 * What runs the deep-tree fixtures: node, also when the suites run under Bun, whose process.chdir
 * fails past PATH_MAX (it reads the new cwd back). The fixture is not what is tested.
 */
const FIXTURE_NODE = process.versions.bun === undefined ? process.execPath : 'node';

/**
 * Builds a chain of `depth` nested directories named `d` below `root`, in a child process that
 * walks down with relative chdir (the full path is far longer than PATH_MAX). Optionally puts a
 * file with `content` at the bottom.
 */
export function makeDeepTree(root: string, depth: number, content?: string): void {
  const script = `
    const fs = require('fs');
    process.chdir(process.argv[1]);
    for (let i = 0; i < ${depth}; i++) { fs.mkdirSync('d'); process.chdir('d'); }
    if (process.argv[2] !== undefined) fs.writeFileSync('leaf.txt', process.argv[2]);
  `;
  execFileSync(FIXTURE_NODE, ['-e', script, root, ...(content === undefined ? [] : [content])]);
}

/** Depth of the `d` chain below `root` and the content of `leaf.txt` at its bottom (null if absent). */
export function inspectDeepTree(root: string): { depth: number; leaf: string | null } {
  const script = `
    const fs = require('fs');
    process.chdir(process.argv[1]);
    let depth = 0;
    while (fs.existsSync('d')) { process.chdir('d'); depth++; }
    const leaf = fs.existsSync('leaf.txt') ? fs.readFileSync('leaf.txt', 'utf8') : null;
    process.stdout.write(JSON.stringify({ depth, leaf }));
  `;
  return JSON.parse(execFileSync(FIXTURE_NODE, ['-e', script, root], { encoding: 'utf8' }));
}

/** A real named pipe (Node has no mkfifo of its own). */
export function mkfifo(path: string): void {
  execFileSync('mkfifo', [path]);
}

/** A real symlink made by ln(1), exactly as a user's tooling would leave it. */
export function symlinkAt(target: string, path: string): void {
  execFileSync('ln', ['-s', target, path]);
}

/** Builds dist/ (helper.cjs and the library) from the current sources; safe to run concurrently. */
export function buildHelper(): void {
  execFileSync(process.execPath, [fileURLToPath(new URL('../../scripts/build.mjs', import.meta.url))]);
}
