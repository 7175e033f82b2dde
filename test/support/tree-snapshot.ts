import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';

/** Relative path -> "type mode size content-hash | link target" for a whole tree (FIFOs are never opened). */
export type TreeSnapshot = Map<string, string>;

export async function snapshotTree(root: string): Promise<TreeSnapshot> {
  const snapshot: TreeSnapshot = new Map();
  async function visit(path: string, relative: string): Promise<void> {
    const info = await lstat(path);
    const mode = (info.mode & 0o7777).toString(8);
    if (info.isSymbolicLink()) snapshot.set(relative, `link ${await readlink(path)}`);
    else if (info.isFile()) {
      const hash = createHash('sha256')
        .update(await readFile(path))
        .digest('hex');
      snapshot.set(relative, `file ${mode} ${info.size} ${hash}`);
    } else if (info.isDirectory()) {
      snapshot.set(relative, `dir ${mode}`);
      for (const name of (await readdir(path)).sort()) await visit(join(path, name), join(relative, name));
    } else snapshot.set(relative, `special ${mode}`);
  }
  await visit(root, '.');
  return snapshot;
}

/** Human-readable differences, empty when the trees are identical. */
export function diffTrees(before: TreeSnapshot, after: TreeSnapshot): string[] {
  const differences: string[] = [];
  for (const [path, state] of after) {
    const old = before.get(path);
    if (old === undefined) differences.push(`added ${path} (${state})`);
    else if (old !== state) differences.push(`changed ${path}: ${old} -> ${state}`);
  }
  for (const path of before.keys()) if (!after.has(path)) differences.push(`removed ${path}`);
  return differences;
}
