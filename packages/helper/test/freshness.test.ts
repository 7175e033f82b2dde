import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkMountPoints, readMountPoints, treeMountPoints } from '../src/freshness.js';
import { isLinux } from './support/helper-run.js';

const line = (id: number, mountPoint: string) =>
  `${id} 1 0:${id} / ${mountPoint} rw,relatime shared:1 - tmpfs tmpfs rw\n`;

/** Every table and tree of this file, removed at its end. */
const scratch = mkdtempSync(join(tmpdir(), 'fs-sandbox-freshness-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function table(...mountPoints: string[]): string {
  const dir = mkdtempSync(join(scratch, 'mountinfo-'));
  const path = join(dir, 'mountinfo');
  writeFileSync(path, mountPoints.map((point, index) => line(index + 20, point)).join(''));
  return path;
}

describe('the mount table', () => {
  it('lists each mount point once, with the kernel escapes undone', () => {
    const path = table('/', '/work/with\\040space', '/tmp/ws');
    expect(readMountPoints(path)).toEqual(new Set(['/', '/work/with space', '/tmp/ws']));
  });

  it('counts a table larger than the bound as unreadable, whole or not at all', () => {
    const path = table('/', '/tmp/ws', '/tmp/other');
    const bytes = line(20, '/').length + line(21, '/tmp/ws').length + line(22, '/tmp/other').length;
    expect(readMountPoints(path, bytes)).toEqual(new Set(['/', '/tmp/ws', '/tmp/other']));
    expect(readMountPoints(path, bytes - 1)).toBeNull();
    expect(readMountPoints(join(path, 'missing'))).toBeNull();
  });

  it('makes a warm helper refuse as stale when a mount it was started with is gone or the table unreadable', () => {
    const path = table('/', '/tmp/ws');
    expect(() => checkMountPoints(['/tmp/ws'], path)).not.toThrow();
    expect(() => checkMountPoints(['/tmp/ws', '/tmp/gone'], path)).toThrow(/stale/);
    expect(() => checkMountPoints(['/tmp/ws'], join(path, 'missing'))).toThrow(/stale/);
  });

  it('reads the table again for every check, even where its last text passed', () => {
    const path = table('/', '/tmp/ws');
    const expected = ['/tmp/ws'];
    expect(() => checkMountPoints(expected, path)).not.toThrow();
    expect(() => checkMountPoints(expected, path)).not.toThrow();
    writeFileSync(path, line(20, '/'));
    expect(() => checkMountPoints(expected, path)).toThrow(/stale/);
    writeFileSync(path, line(20, '/') + line(21, '/tmp/ws'));
    expect(() => checkMountPoints(expected, path)).not.toThrow();
    // The same text checked for another list is checked in full.
    expect(() => checkMountPoints(['/tmp/ws', '/tmp/gone'], path)).toThrow(/stale/);
  });

  it('checks a mount found through a symlink in full every time, though the table is unchanged', () => {
    const dir = mkdtempSync(join(scratch, 'mount-link-'));
    const target = join(dir, 'target');
    const link = join(dir, 'link');
    mkdirSync(target);
    mkdirSync(join(dir, 'elsewhere'));
    symlinkSync(target, link);
    const path = table('/', target);
    const expected = [link];
    expect(() => checkMountPoints(expected, path)).not.toThrow();
    // The table still lists the target; the symlink now leads somewhere that is no mount point.
    rmSync(link);
    symlinkSync(join(dir, 'elsewhere'), link);
    expect(() => checkMountPoints(expected, path)).toThrow(/stale/);
  });

  it.skipIf(!isLinux)(
    'refuses a tree operation where Linux has a mount table this cannot read (Linux only: elsewhere there is none)',
    () => {
      const path = table('/', '/tmp/ws');
      expect(treeMountPoints(path)).toEqual(new Set(['/', '/tmp/ws']));
      for (const unreadable of [
        () => treeMountPoints(path, 10),
        () => treeMountPoints(join(path, 'missing')),
      ]) {
        expect(unreadable).toThrow(expect.objectContaining({ kind: 'permission_denied' }));
      }
      expect(treeMountPoints()?.has('/')).toBe(true);
    },
  );
});
