import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createBroker, type FsBroker } from '@fs-sandbox/broker';
import type { TreeProgress } from '@fs-sandbox/policy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './fixtures/conformance/serve-process.js';
import { createFixture, type Fixture, removeFixture, uri, workspaceContext } from './support/fixture.js';

/**
 * Progress of long tree operations, from a sandboxed helper (real bwrap) through its stderr to the
 * library's `onProgress`, and from there to the CLI's counter, which a pipe never sees.
 */

const DIRECTORIES = 20;
const FILES_PER_DIRECTORY = 100;
/** The root's entries: every directory and file below it. */
const ENTRIES = DIRECTORIES * (FILES_PER_DIRECTORY + 1);

let fixture: Fixture;
let broker: FsBroker;

async function makeTree(root: string): Promise<void> {
  for (let d = 0; d < DIRECTORIES; d++) {
    await mkdir(join(root, `d${d}`), { recursive: true });
    for (let f = 0; f < FILES_PER_DIRECTORY; f++) await writeFile(join(root, `d${d}`, `f${f}`), 'x');
  }
}

beforeAll(async () => {
  ensureBuilt();
  fixture = await createFixture('root');
  broker = createBroker();
});

afterAll(async () => {
  await broker?.close();
  if (fixture) await removeFixture(fixture);
});

function summary(events: TreeProgress[]) {
  const last = (phase: string) => events.filter((event) => event.phase === phase).at(-1)?.entries;
  const counts = (phase: string) => events.filter((event) => event.phase === phase).map((e) => e.entries);
  const rising = (values: number[]) =>
    values.every((value, index) => index === 0 || value > (values[index - 1] as number));
  return {
    total: last('total'),
    rising: rising(counts('checked')) && rising(counts('done')),
    done: last('done'),
  };
}

describe('tree progress', () => {
  for (const sandboxed of [true, false]) {
    it(`reports the total before a tree copy and remove start, then counts up to it (${sandboxed ? 'bwrap' : 'in-process'})`, async () => {
      const tree = join(fixture.ws, `tree-${sandboxed}`);
      await makeTree(tree);
      const sandbox = sandboxed ? (workspaceContext(fixture) as never) : null;
      const copied: TreeProgress[] = [];
      await broker.call(
        'fs/copy',
        { sourcePath: uri(tree), destinationPath: uri(`${tree}-copy`), recursive: true, sandbox },
        { onProgress: (event) => copied.push(event) },
      );
      expect(summary(copied)).toMatchObject({ total: ENTRIES, rising: true });
      expect(summary(copied).done).toBeLessThanOrEqual(ENTRIES);
      const removed: TreeProgress[] = [];
      await broker.call(
        'fs/remove',
        { path: uri(`${tree}-copy`), recursive: true, sandbox },
        { onProgress: (event) => removed.push(event) },
      );
      expect(summary(removed)).toMatchObject({ total: ENTRIES, rising: true });
      await expect(stat(`${tree}-copy`)).rejects.toThrow(/ENOENT/);
      await rm(tree, { recursive: true });
    });
  }

  it('keeps progress lines out of the errors of a helper that fails midway', async () => {
    const tree = join(fixture.ws, 'slow');
    await makeTree(tree);
    const events: TreeProgress[] = [];
    const failure = await broker
      .call(
        'fs/copy',
        {
          sourcePath: uri(tree),
          destinationPath: uri(`${tree}-copy`),
          recursive: true,
          sandbox: workspaceContext(fixture) as never,
        },
        { onProgress: (event) => events.push(event), timeoutMs: 150 },
      )
      .then(
        () => null,
        (error: unknown) => error as Error,
      );
    // On a fast machine the copy may finish in time; when it does not, its error is clean.
    if (failure !== null) expect(failure.message).not.toContain('fs-sandbox:progress');
    await rm(`${tree}-copy`, { recursive: true, force: true });
    await rm(tree, { recursive: true });
  });
});
