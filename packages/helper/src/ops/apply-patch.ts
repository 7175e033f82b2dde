import {
  applyChunks,
  FsError,
  isFsError,
  LIMITS,
  type PatchHunk,
  type PatchTargetOf,
  parseBoundedPatch,
  resolvePatchTargets,
} from '@fs-sandbox/policy/core';
import { displayPath } from '../display-path.js';
import type { Operation } from '../operation.js';
import { pathParam, requiredBoolean } from '../params.js';
import { AtomicCommitError, commitAtomically } from '../patch-atomic.js';
import {
  deleteFile,
  lstatOrNull,
  makeParents,
  type PatchFileContext,
  readTextOrNull,
  writeText,
} from '../patch-files.js';
import { sizeText } from '../size-text.js';
import { textTooLarge } from '../text-codec.js';

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
    const targets = resolvePatchTargets(parseBoundedPatch(params.patch), params.cwd, context.os);
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

  private async notAFile(path: string): Promise<boolean> {
    if (this.overlay.has(path)) return false;
    const stats = await lstatOrNull(path, this.files.os);
    return stats !== null && !stats.isFile();
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
    return step(target, { path, kind: 'delete' }, null, path, before);
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
    if (Buffer.byteLength(text, 'utf8') > LIMITS.textMaxBytes) {
      throw textTooLarge(path, `would be ${sizeText(Buffer.byteLength(text, 'utf8'))} after the patch`);
    }
    const destination = target.movePath;
    // Read through a link, the update replaces the link's target: the link is not what was read.
    const sourceBefore: Before = { text: original, lost: await this.notAFile(path) };
    if (destination === null) {
      this.overlay.set(path, text);
      return step(target, { path, kind: 'update' }, text, path, sourceBefore);
    }
    const before = await this.before(destination);
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
  return { target, change, text, written, before, source: null };
}

/**
 * One step as the reference commits it, and its account in the ledger: `exact` turns false when the
 * delta can no longer say what is on disk — a replaced or deleted name that was not a regular file
 * or could not be read, a failed write that had already made directories, a failed remove that
 * changed the file anyway. A move writes its destination first; if its source then cannot be
 * removed, the delta records the destination as added (the source is still there, as it was).
 */
async function commitStep(step: Step, files: PatchFileContext, ledger: Ledger): Promise<void> {
  if (step.before.lost) ledger.exact = false;
  if (step.text === null) {
    await removeOrAccount(step.written, step.before, files, ledger);
    ledger.changes.push(step.change);
    return;
  }
  const made = await makeParents(step.written, files).catch((error: unknown) => {
    throw withDelta(error, ledger);
  });
  try {
    await writeText(step.written, step.text, files);
  } catch (error) {
    if (made.length > 0) ledger.exact = false;
    throw withDelta(error, ledger);
  }
  if (step.source === null) {
    ledger.changes.push(step.change);
    return;
  }
  const added: Change = { path: step.written, kind: 'add' };
  ledger.changes.push(added);
  await removeOrAccount(step.source.path, step.source.before, files, ledger);
  ledger.changes[ledger.changes.length - 1] = step.change;
}

/** Removes a name; on a failure, `exact` holds only if the file still has the text it had. */
async function removeOrAccount(path: string, before: Before, files: PatchFileContext, ledger: Ledger) {
  try {
    await deleteFile(path, files);
  } catch (error) {
    const unchanged =
      before.text !== null && (await readTextOrNull(path, files).catch(() => null)) === before.text;
    if (!unchanged) ledger.exact = false;
    throw withDelta(error, ledger);
  }
}

/**
 * `atomic`: every step was computed before this runs; patch-atomic.ts stages them all and renames
 * them in, or puts back what it had renamed. A failure's delta lists the steps that could not be put
 * back.
 */
async function commitAll(steps: readonly Step[], files: PatchFileContext, ledger: Ledger): Promise<void> {
  const atomicSteps = steps.map((step) => ({
    write: step.text === null ? null : { path: step.written, text: step.text },
    remove: step.text === null ? step.written : (step.source?.path ?? null),
  }));
  try {
    const { exact } = await commitAtomically(atomicSteps, files);
    ledger.changes.push(...steps.map((step) => step.change));
    ledger.exact = exact && steps.every((step) => !step.before.lost);
  } catch (error) {
    if (!(error instanceof AtomicCommitError)) throw error;
    const kept = new Ledger();
    kept.changes.push(...error.notUndone.map((index) => (steps[index] as Step).change));
    kept.exact = !error.stray && error.notUndone.length === 0;
    throw withDelta(error.failure, kept);
  }
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
