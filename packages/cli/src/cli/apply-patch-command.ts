import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { type ApprovalPolicy, FsError, isFsError, LIMITS, type WireResultOf } from '@fs-sandbox/policy';
import type { Command } from 'commander';
import { type CliDeps, EXIT } from './cli-io.js';
import { baseDirectory } from './context-options.js';
import { readBoundedStdin } from './read-stdin.js';
import { runShortcut, type ShortcutFlags, shortcutCommand } from './shortcut.js';

interface ApplyPatchFlags extends ShortcutFlags {
  atomic?: boolean;
  dryRun?: boolean;
  approvalPolicy?: string;
}

const APPROVAL_POLICIES = ['never', 'on-request', 'on-failure', 'unless-trusted'] as const;

/**
 * `fs-sandbox apply-patch [FILE|-]`: applies a Codex patch (fs/applyPatch) under `--cwd` and prints
 * exactly what the reference's `apply_patch` prints. A failure prints the error and, when the
 * patch was partly committed, what is now on disk.
 */
export function registerApplyPatchCommand(program: Command, deps: CliDeps): void {
  shortcutCommand(program, 'apply-patch')
    .description('apply a Codex-format patch from FILE or stdin under --cwd (fs/applyPatch)')
    .argument('[file]', 'the patch file, or - for stdin (default: stdin)')
    .option('--atomic', 'commit all files or none (fs/applyPatch `atomic`)')
    .option('--dry-run', 'check and compute everything, write nothing')
    .option('--approval-policy <policy>', `${APPROVAL_POLICIES.join(', ')} (default: on-request)`)
    .action((file: string | undefined, flags: ApplyPatchFlags) =>
      runShortcut(deps, flags, async ({ broker, sandbox, uri, timeoutMs }) => {
        const patch = await readPatch(file, flags, deps);
        const params = {
          patch,
          cwd: uri('.'),
          sandbox,
          approvalPolicy: approvalPolicyOf(flags.approvalPolicy),
          atomic: flags.atomic === true,
          dryRun: flags.dryRun === true,
        };
        try {
          // ResultOf maps over the keys, which flattens the union; the wire type keeps it.
          const result = (await broker.call('fs/applyPatch', params, {
            timeoutMs,
          })) as WireResultOf<'fs/applyPatch'>;
          if (result.status === 'needs_approval') {
            deps.io.stderr.write(`fs-sandbox: the patch needs approval: ${result.reason}\n`);
            deps.setExitCode(EXIT.failed);
            return;
          }
          deps.io.stdout.write(result.summary);
        } catch (error) {
          if (isFsError(error)) writeDelta(error, deps);
          throw error;
        }
      }),
    );
}

function approvalPolicyOf(value: string | undefined): ApprovalPolicy {
  if (value === undefined) return 'on-request';
  const known = APPROVAL_POLICIES.find((policy) => policy === value);
  if (known === undefined) {
    throw new FsError('invalid_params', `--approval-policy must be one of ${APPROVAL_POLICIES.join(', ')}`);
  }
  return known;
}

async function readPatch(file: string | undefined, flags: ApplyPatchFlags, deps: CliDeps): Promise<string> {
  const limit = LIMITS.rpcMaxMessageBytes;
  if (file === undefined || file === '-') {
    return await readBoundedStdin(deps.io.stdin, limit);
  }
  const path = resolve(baseDirectory(flags, deps.io), file);
  const size = (await stat(path).catch(() => null))?.size;
  if (size === undefined) throw new FsError('not_found', `cannot read the patch file ${path}`);
  if (size > limit) throw new FsError('invalid_params', `the patch file ${path} is over ${limit} bytes`);
  return await readFile(path, 'utf8');
}

/** After a partial commit the error carries `data.delta`: say which files changed and whether exactly. */
function writeDelta(error: FsError, deps: CliDeps): void {
  const delta = error.extra?.delta as
    | { changes: { path: string; kind: string }[]; exact: boolean }
    | undefined;
  if (delta === undefined) return;
  const letter: Record<string, string> = { add: 'A', update: 'M', delete: 'D' };
  const lines = delta.changes.map((change) => `${letter[change.kind] ?? '?'} ${change.path}`);
  deps.io.stderr.write(
    `fs-sandbox: committed before the failure (exact: ${delta.exact}):\n${lines.map((line) => `  ${line}\n`).join('')}`,
  );
}
