import { FsError, fsPathArg } from '@fs-sandbox/policy/core';
import { createStagingFile, publishStagingFile, sealStagingFile } from './atomic-write.js';
import { type LocatedName, locateName } from './directory-anchor.js';
import { modeForReplacement } from './file-mode.js';
import { link, lstat, rename, rmdir, unlink } from './fs-async.js';
import { refuseGuarded } from './ops/remove.js';
import { fromOsError, hasErrno } from './os-error.js';
import { makeParents, type PatchFileContext } from './patch-files.js';
import { tempSiblingName } from './temp-name.js';
import { type LocatedWriteTarget, locateWriteTarget } from './write-target.js';

/**
 * `atomic: true`, beyond the reference: nothing is renamed into place until every file's new
 * content is computed (by the caller), every name is located and judged by the guard, and every
 * new content is staged, sealed and flushed beside its target. Then the staged files are renamed in
 * and the removed names renamed aside, in patch order; each replaced file stays reachable under a
 * hidden name in its own directory (a hard link, or the renamed-aside name where a file system has
 * no hard links). A failed step puts back every earlier one by renaming, last first — the old
 * inodes themselves, with their mode, owner and links, not a rewrite of their text — and only at
 * the end, after success, are the hidden names removed.
 *
 * The window that remains: the renames are each atomic but not together, so for their duration a
 * reader can see some files new and others old; a helper killed mid-commit (timeout, signal, power
 * loss) neither finishes nor undoes, and leaves the hidden names (the broker's temp clean-up
 * removes tagged ones); and a restore renames over whatever another writer put at a name after
 * the patch changed it.
 */

export interface AtomicStep {
  /** The name written (add, update, a move's destination) and its new text; null for a delete. */
  write: { path: string; text: string } | null;
  /** A name removed: a delete's path, or a move's source. */
  remove: string | null;
}

type Undo =
  | { kind: 'created'; target: LocatedWriteTarget }
  | { kind: 'replaced'; target: LocatedWriteTarget; aside: string }
  | { kind: 'removed'; located: LocatedName; aside: string };

interface Staged {
  write: { target: LocatedWriteTarget; staging: string } | null;
  remove: LocatedName | null;
}

/** Why an atomic commit failed, and whether what is on disk is exactly what it was before. */
export class AtomicCommitError extends Error {
  constructor(
    readonly failure: unknown,
    /** Indices of steps that could not be put back (they stay committed). */
    readonly notUndone: readonly number[],
    /** Something changed that no step describes (a directory made, a hidden name left). */
    readonly stray: boolean,
  ) {
    super('atomic patch commit failed');
  }
}

export async function commitAtomically(
  steps: readonly AtomicStep[],
  context: PatchFileContext,
): Promise<{ exact: boolean }> {
  const commit = new AtomicCommit(context);
  try {
    await commit.stage(steps);
  } catch (error) {
    const stray = await commit.abandon();
    throw new AtomicCommitError(error, [], stray);
  }
  try {
    await commit.publish();
  } catch (error) {
    const { notUndone, stray } = await commit.rollBack();
    throw new AtomicCommitError(error, notUndone, stray);
  }
  return { exact: await commit.finish() };
}

class AtomicCommit {
  private readonly staged: Staged[] = [];
  /** Directories made for new files, outermost first. */
  private readonly madeDirectories: string[] = [];
  /** What each published step did, per step index. */
  private readonly undos: Undo[][] = [];

  constructor(private readonly context: PatchFileContext) {}

  async stage(steps: readonly AtomicStep[]): Promise<void> {
    for (const step of steps) {
      const staged: Staged = { write: null, remove: null };
      this.staged.push(staged);
      if (step.remove !== null) staged.remove = await this.locateRemoval(step.remove);
      if (step.write !== null) staged.write = await this.stageWrite(step.write.path, step.write.text);
    }
  }

  private async locateRemoval(path: string): Promise<LocatedName> {
    const located = await locateName(path, this.context.os);
    try {
      if (this.context.guard !== null) refuseGuarded(this.context.guard, located, path, this.context.os);
    } catch (error) {
      await located.parent.close();
      throw error;
    }
    return located;
  }

  private async stageWrite(path: string, text: string): Promise<Staged['write']> {
    this.madeDirectories.push(...(await makeParents(path, this.context)));
    const { os, guard, sandboxed } = this.context;
    const target = await locateWriteTarget(path, { os, guard, refuseSymlinkLeaf: sandboxed });
    try {
      const staging = await createStagingFile(target, os);
      try {
        await staging.handle.writeAll(new TextEncoder().encode(text));
        await sealStagingFile(staging.handle, target, {
          mode: modeForReplacement(target.existing),
          durable: true,
        });
      } catch (error) {
        await staging.handle.close().catch(() => undefined);
        await unlink(fsPathArg(staging.path)).catch(() => undefined);
        throw fromOsError(error, path);
      }
      await staging.handle.close();
      return { target, staging: staging.path };
    } catch (error) {
      await target.parent.close();
      throw error;
    }
  }

  async publish(): Promise<void> {
    for (const staged of this.staged) {
      const undos: Undo[] = [];
      this.undos.push(undos);
      if (staged.write !== null) undos.push(await this.publishWrite(staged.write));
      if (staged.remove !== null) undos.push(await this.renameAside(staged.remove));
    }
  }

  private async publishWrite({ target, staging }: NonNullable<Staged['write']>): Promise<Undo> {
    const present = await lstat(fsPathArg(target.access)).catch((error: unknown) => {
      if (hasErrno(error, 'ENOENT')) return null;
      throw fromOsError(error, target.path);
    });
    let aside: string | null = null;
    if (present !== null)
      aside = await this.keepAside(target.access, target.parent.child(tempSiblingName()), target.path);
    try {
      await publishStagingFile(staging, target, { os: this.context.os, createOnly: false, durable: true });
    } catch (error) {
      if (aside !== null) {
        // Renamed aside, the old file comes back; linked aside, it never left (rename(2) between two
        // names of one file does nothing) and the unlink drops the second name.
        await rename(fsPathArg(aside), fsPathArg(target.access)).catch(() => undefined);
        await unlink(fsPathArg(aside)).catch(() => undefined);
      }
      throw error;
    }
    return aside === null ? { kind: 'created', target } : { kind: 'replaced', target, aside };
  }

  /** A second name for the file about to be replaced; where hard links are not possible, the file is renamed aside. */
  private async keepAside(access: string, aside: string, shown: string): Promise<string> {
    try {
      await link(fsPathArg(access), fsPathArg(aside));
      return aside;
    } catch (error) {
      if (!hasErrno(error, 'EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EMLINK', 'EXDEV')) {
        throw fromOsError(error, shown);
      }
    }
    await rename(fsPathArg(access), fsPathArg(aside)).catch((error: unknown) => {
      throw fromOsError(error, shown);
    });
    return aside;
  }

  private async renameAside(located: LocatedName): Promise<Undo> {
    const stats = await lstat(fsPathArg(located.access)).catch((error: unknown) => {
      throw fromOsError(error, located.name);
    });
    if (stats.isDirectory()) {
      throw new FsError('is_directory', `Failed to delete file ${located.name}: it is a directory`);
    }
    const aside = located.parent.child(tempSiblingName());
    await rename(fsPathArg(located.access), fsPathArg(aside)).catch((error: unknown) => {
      throw fromOsError(error, located.name);
    });
    return { kind: 'removed', located, aside };
  }

  /** Puts back every published step, last first; what cannot be put back stays and is reported. */
  async rollBack(): Promise<{ notUndone: number[]; stray: boolean }> {
    const notUndone: number[] = [];
    for (let index = this.undos.length - 1; index >= 0; index--) {
      for (const undo of [...(this.undos[index] ?? [])].reverse()) {
        const undone = await undoOne(undo).then(
          () => true,
          () => false,
        );
        if (!undone && !notUndone.includes(index)) notUndone.push(index);
      }
    }
    const stray = await this.abandon();
    return { notUndone: notUndone.reverse(), stray };
  }

  /** Removes staging files and the directories made for them; true when something could not be removed. */
  async abandon(): Promise<boolean> {
    let stray = false;
    for (const staged of this.staged) {
      if (staged.write !== null) {
        await unlink(fsPathArg(staged.write.staging)).catch((error: unknown) => {
          if (!hasErrno(error, 'ENOENT')) stray = true;
        });
      }
    }
    await this.closeAll();
    for (const directory of [...this.madeDirectories].reverse()) {
      await rmdir(fsPathArg(directory)).catch(() => {
        stray = true;
      });
    }
    return stray;
  }

  /** After success: the hidden names go; one left behind is a change the delta does not list. */
  async finish(): Promise<boolean> {
    let exact = true;
    for (const undo of this.undos.flat()) {
      if (undo.kind === 'created') continue;
      await unlink(fsPathArg(undo.aside)).catch(() => {
        exact = false;
      });
    }
    await this.closeAll();
    return exact;
  }

  private async closeAll(): Promise<void> {
    for (const staged of this.staged.splice(0)) {
      await staged.write?.target.parent.close();
      await staged.remove?.parent.close();
    }
  }
}

async function undoOne(undo: Undo): Promise<void> {
  if (undo.kind === 'created') {
    await unlink(fsPathArg(undo.target.access));
  } else if (undo.kind === 'replaced') {
    await rename(fsPathArg(undo.aside), fsPathArg(undo.target.access));
  } else {
    await rename(fsPathArg(undo.aside), fsPathArg(undo.located.access));
  }
}
