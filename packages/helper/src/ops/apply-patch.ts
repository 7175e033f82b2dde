import type { BigIntStats } from 'node:fs';
import {
  applyChunks,
  FsError,
  isFsError,
  type PatchHunk,
  type PatchTargetOf,
  parsePatch,
  resolvePatchTargets,
} from '@fs-sandbox/policy/core';
import { displayPath } from '../display-path.js';
import type { Operation } from '../operation.js';
import { pathParam, requiredBoolean } from '../params.js';
import { deleteFile, lstatOrNull, type PatchFileContext, readTextOrNull, writeText } from '../patch-files.js';
import { removeAt } from './remove.js';

/**
 * `fs/applyPatch` in one helper run: the patch is parsed again here (the helper trusts no caller's
 * parse) and committed file by file, each write and remove going through the guarded primitives of
 * patch-files.ts. As in the reference it is not a transaction: a failure after a partial success
 * leaves the earlier changes, and the error says what is on disk (`data.delta`); a move writes the
 * destination before it removes the source. `atomic` computes and checks every file first, then
 * commits and, on a failure, puts back what it had already changed.
 */

interface Change {
  path: string;
  kind: 'add' | 'delete' | 'update';
  movePath?: string;
}

/** What was at a name before the patch changed it: its text, or why it cannot be put back. */
interface Before {
  text: string | null;
  /** Something was there that cannot be reconstructed from `text` (unreadable, a link, not a file). */
  lost: boolean;
}

interface Step {
  target: PatchTargetOf;
  change: Change;
  /** The new text of the written name (add, update), or null for a delete. */
  text: string | null;
  /** The name written or removed (an update's move destination). */
  written: string;
  before: Before;
  /** A move's source, removed after the destination is written. */
  source: { path: string; before: Before } | null;
  deleted: BigIntStats | null;
}

class Ledger {
  readonly changes: Change[] = [];
  exact = true;
  delta() {
    return { changes: [...this.changes], exact: this.exact };
  }
}

export const applyPatchOperation: Operation<'fs/applyPatch'> = {
  parse: (raw, os) => {
    if (typeof raw.patch !== 'string') throw new FsError('invalid_params', 'patch must be a string');
    return {
      patch: raw.patch,
      cwd: pathParam(raw, 'cwd', os),
      approvalPolicy: raw.approvalPolicy as never,
      atomic: requiredBoolean(raw, 'atomic'),
      dryRun: requiredBoolean(raw, 'dryRun'),
    };
  },
  async run(params, context) {
    const targets = resolvePatchTargets(parsePatch(params.patch), params.cwd, context.os);
    if (targets.length === 0) {
      throw new FsError('patch_rejected', 'patch rejected: empty patch', { reason: 'empty patch' });
    }
    const files: PatchFileContext = { os: context.os, sandboxed: context.sandboxed, guard: context.guard };
    const planner = new Planner(files);
    const ledger = new Ledger();
    const steps: Step[] = [];
    for (const target of targets) {
      const step = await planner.plan(target).catch((error: unknown) => {
        throw withDelta(error, ledger);
      });
      steps.push(step);
      if (!params.atomic && !params.dryRun) await commitStep(step, files, ledger);
    }
    if (params.atomic && !params.dryRun) await commitAll(steps, files, ledger);
    return {
      response: {
        status: params.dryRun ? 'dry_run' : 'applied',
        summary: summaryOf(targets),
        changes: steps.map((step) => step.change),
        exact: params.dryRun ? true : ledger.exact,
      },
    };
  },
};

/**
 * Computes each step against the patch's own earlier steps (an overlay of what they write), so a
 * dry run and an atomic run see what a sequential run would.
 */
class Planner {
  private readonly overlay = new Map<string, string | null>();
  constructor(private readonly files: PatchFileContext) {}

  private async current(path: string): Promise<string | null> {
    if (this.overlay.has(path)) return this.overlay.get(path) ?? null;
    return await readTextOrNull(path, this.files);
  }

  private async before(path: string): Promise<Before> {
    if (this.overlay.has(path)) return { text: this.overlay.get(path) ?? null, lost: false };
    const stats = await lstatOrNull(path, this.files.os);
    if (stats === null) return { text: null, lost: false };
    if (!stats.isFile()) return { text: null, lost: true };
    const text = await readTextOrNull(path, this.files).catch(() => null);
    return { text, lost: text === null };
  }

  async plan(target: PatchTargetOf): Promise<Step> {
    const { hunk, path } = target;
    if (hunk.kind === 'add') {
      const before = await this.before(path);
      this.overlay.set(path, hunk.contents);
      return step(target, { path, kind: 'add' }, hunk.contents, path, before);
    }
    if (hunk.kind === 'delete') return await this.planDelete(target, path);
    return await this.planUpdate(target, hunk, path);
  }

  private async planDelete(target: PatchTargetOf, path: string): Promise<Step> {
    const stats = this.overlay.get(path) === null ? null : await lstatOrNull(path, this.files.os);
    if (stats === null) {
      throw new FsError('not_found', `Failed to delete file ${displayPath(path)}: No such file or directory`);
    }
    if (stats.isDirectory()) {
      throw new FsError('is_directory', `Failed to delete file ${displayPath(path)}: it is a directory`);
    }
    const before = await this.before(path);
    this.overlay.set(path, null);
    return { ...step(target, { path, kind: 'delete' }, null, path, before), deleted: stats };
  }

  private async planUpdate(
    target: PatchTargetOf,
    hunk: Extract<PatchHunk, { kind: 'update' }>,
    path: string,
  ): Promise<Step> {
    const original = await this.current(path);
    if (original === null) {
      throw new FsError(
        'not_found',
        `Failed to read file to update ${displayPath(path)}: No such file or directory`,
      );
    }
    const text = applyChunks(original, hunk.chunks, displayPath(path));
    const destination = target.movePath;
    if (destination === null) {
      this.overlay.set(path, text);
      return step(target, { path, kind: 'update' }, text, path, { text: original, lost: false });
    }
    const before = await this.before(destination);
    const sourceBefore: Before = { text: original, lost: false };
    this.overlay.set(destination, text);
    if (destination !== path) this.overlay.set(path, null);
    return {
      ...step(target, { path, kind: 'update', movePath: destination }, text, destination, before),
      source: destination === path ? null : { path, before: sourceBefore },
    };
  }
}

function step(
  target: PatchTargetOf,
  change: Change,
  text: string | null,
  written: string,
  before: Before,
): Step {
  return { target, change, text, written, before, source: null, deleted: null };
}

async function commitStep(step: Step, files: PatchFileContext, ledger: Ledger): Promise<void> {
  try {
    if (step.text === null) {
      await deleteFile(step.written, step.deleted as BigIntStats, files);
      if (step.deleted?.isFile() !== true) ledger.exact = false;
    } else {
      await writeText(step.written, step.text, files);
      if (step.before.lost) ledger.exact = false;
    }
  } catch (error) {
    throw withDelta(error, ledger);
  }
  if (step.source !== null) {
    try {
      await removeAt(step.source.path, { ...files, recursive: false, force: false });
    } catch (error) {
      // The destination is written and the source still there: neither state the patch describes.
      ledger.changes.push(step.change);
      ledger.exact = false;
      throw withDelta(error, ledger);
    }
  }
  ledger.changes.push(step.change);
}

/**
 * `atomic`: every step was computed and its files read before this runs. The steps are committed in
 * order; if one fails, those already committed are put back from the texts kept in memory, last
 * first. What cannot be put back (a deleted link, an unreadable file) makes `exact` false.
 */
async function commitAll(steps: readonly Step[], files: PatchFileContext, ledger: Ledger): Promise<void> {
  const done: Step[] = [];
  for (const current of steps) {
    try {
      await commitStep(current, files, new Ledger());
      done.push(current);
    } catch (failure) {
      const restore = new Ledger();
      for (const committed of [...done, current].reverse()) {
        const undone = await undoStep(committed, files);
        if (!undone) {
          restore.exact = false;
          restore.changes.push(committed.change);
        }
      }
      throw withDelta(failure, restore);
    }
  }
  for (const committed of steps) {
    ledger.changes.push(committed.change);
    if (committed.before.lost || (committed.deleted !== null && !committed.deleted.isFile()))
      ledger.exact = false;
  }
}

/** Puts one step's names back as they were; false when that is not possible exactly. */
async function undoStep(committed: Step, files: PatchFileContext): Promise<boolean> {
  try {
    if (committed.source !== null) await restoreName(committed.source.path, committed.source.before, files);
    return await restoreName(committed.written, committed.before, files);
  } catch {
    return false;
  }
}

async function restoreName(path: string, before: Before, files: PatchFileContext): Promise<boolean> {
  if (before.lost) return false;
  if (before.text === null) {
    await removeAt(path, { ...files, recursive: false, force: true });
  } else {
    await writeText(path, before.text, files);
  }
  return true;
}

/** An error after something was committed carries what is now on disk. */
function withDelta(error: unknown, ledger: Ledger): unknown {
  if (!isFsError(error) || (ledger.changes.length === 0 && ledger.exact)) return error;
  return new FsError(error.kind, error.message, { ...error.extra, delta: ledger.delta() });
}

/** The reference's output: added, then modified (a move under its new name), then deleted files, as the patch spells them. */
function summaryOf(targets: readonly PatchTargetOf[]): string {
  const lines = ['Success. Updated the following files:'];
  const spelled = (kind: PatchHunk['kind']) =>
    targets
      .filter(({ hunk }) => hunk.kind === kind)
      .map(({ hunk }) => (hunk.kind === 'update' && hunk.movePath !== null ? hunk.movePath : hunk.path));
  for (const path of spelled('add')) lines.push(`A ${path}`);
  for (const path of spelled('update')) lines.push(`M ${path}`);
  for (const path of spelled('delete')) lines.push(`D ${path}`);
  return `${lines.join('\n')}\n`;
}
