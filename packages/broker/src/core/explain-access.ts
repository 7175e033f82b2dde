import { lstatSync } from 'node:fs';
import {
  type AccessExplanation,
  explainAccess,
  fsPathArg,
  type HostOs,
  joinPath,
  nativePathOf,
  parentPath,
  parseParams,
  type SandboxContext,
  splitNativePath,
} from '@fs-sandbox/policy';
import { hostSurfaceRefusal, realOrSelf } from '../runner/path-guard.js';
import type { SandboxRunner } from '../runner/sandbox-runner.js';
import { type Route, routeFor, unsandboxedBecause } from './routing.js';

export interface ExplainOptions {
  os: HostOs;
  runner: SandboxRunner;
  /** The broker refuses write-class methods (`trusted: false`). */
  untrusted: boolean;
  /** The broker refuses in-process routes (`requireSandbox`). */
  requireSandbox: boolean;
  /** The context of a request that carries none (the broker's `serverPolicy`). */
  serverPolicy: SandboxContext | null;
}

/**
 * fs/explainAccess: what the broker would let a request do with `path` under `sandbox`, and why,
 * answered without a helper. The sandbox is prepared as for a real request (so the guard is the
 * one the helper would get) and the path is resolved on the host as the physical pre-check does.
 * The broker's own gates come first: they refuse before any policy is consulted.
 */
export async function explainPathAccess(raw: unknown, options: ExplainOptions): Promise<AccessExplanation> {
  const { os } = options;
  const parsed = parseParams('fs/explainAccess', raw);
  const path = nativePathOf(parsed.path, os);
  const route: Route = routeFor(parsed.sandbox, os, options.serverPolicy);
  let explanation: AccessExplanation;
  if (route.kind === 'in-process') explanation = inProcess(route, options);
  else {
    const { guard } = await options.runner.prepare(route.context);
    const writeTarget = writeTargetOf(path, os);
    explanation = explainAccess(route.context.profile, path, os, {
      guard,
      resolved: realOrSelf(path, os),
      writeTarget,
      isSymlink: isSymlink(path),
      surfaceRefusal: hostSurfaceRefusal(guard, writeTarget, os),
      runtime: await options.runner.runtimeReads(),
    });
  }
  if (options.untrusted && explanation.access === 'write') {
    return {
      ...explanation,
      access: 'read',
      reason: 'this broker runs for an untrusted workspace and refuses every write (untrusted_workspace)',
    };
  }
  return explanation;
}

function inProcess(
  route: Extract<Route, { kind: 'in-process' }>,
  options: ExplainOptions,
): AccessExplanation {
  if (options.requireSandbox) {
    return {
      access: 'none',
      reason: `this broker requires a sandbox, and the request ${unsandboxedBecause(route.reason)}`,
    };
  }
  return {
    access: 'write',
    reason: `nothing restricts it: the request ${unsandboxedBecause(route.reason)}, so it runs without a sandbox`,
  };
}

function writeTargetOf(path: string, os: HostOs): string {
  const parent = parentPath(os, path);
  const name = splitNativePath(os, path)?.segments.at(-1);
  return parent === null || name === undefined ? path : joinPath(os, realOrSelf(parent, os), name);
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(fsPathArg(path)).isSymbolicLink();
  } catch {
    return false;
  }
}
