import { createHash, randomBytes } from 'node:crypto';
import {
  chmod,
  link,
  lstat,
  mkdir,
  readdir,
  readFile,
  rename,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ServeProcess } from './fixtures/conformance/serve-process.js';
import {
  cliEnv,
  createFixture,
  type Fixture,
  removeFixture,
  uri,
  workspaceContext,
} from './support/fixture.js';
import { diffTrees, snapshotTree } from './support/tree-snapshot.js';

/**
 * Write handles (fs/open `mode: "replace"`, fs/writeBlock, fs/close) through the real
 * `fs-sandbox serve` with real bwrap: each block is one sandboxed helper run into a staging file,
 * and the close publishes it over the target in one rename, checked on the target's physical
 * location at that moment. The host is compared before and after every attack.
 */

const MIB = 1024 * 1024;
const b64 = (bytes: Buffer | string) => Buffer.from(bytes).toString('base64');
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

let fixture: Fixture;
let serve: ServeProcess;
let context: Record<string, unknown>;
let handleCount = 0;

async function stagingNames(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((name) => name.startsWith('.fs-sandbox-'));
}

async function openWrite(
  path: string,
): Promise<{ handleId: string; reply: Awaited<ReturnType<ServeProcess['request']>> }> {
  const handleId = `w${handleCount++}`;
  const reply = await serve.request('fs/open', {
    handleId,
    path: uri(path),
    mode: 'replace',
    sandbox: context,
  });
  return { handleId, reply };
}

beforeAll(async () => {
  ensureBuilt();
  fixture = await createFixture('root');
  context = workspaceContext(fixture);
  serve = ServeProcess.start([], { env: cliEnv(fixture) });
  await serve.handshake();
});

afterAll(async () => {
  await serve?.stop();
  if (fixture) await removeFixture(fixture);
});

describe('write handles under bwrap', () => {
  it('writes 3 MiB in blocks sent out of order, invisible until the close publishes them whole', async () => {
    const target = join(fixture.ws, 'big.bin');
    await writeFile(target, 'old content\n');
    await chmod(target, 0o640);
    const data = randomBytes(3 * MIB + 123);
    const { handleId, reply } = await openWrite(target);
    expect(reply.result).toEqual({ handleId });
    for (const offset of [2 * MIB, 0, MIB, 3 * MIB]) {
      const chunk = data.subarray(offset, Math.min(offset + MIB, data.length));
      expect((await serve.request('fs/writeBlock', { handleId, offset, chunk: b64(chunk) })).result).toEqual(
        {},
      );
    }
    // Readers still see the old file, and the blocks sit in one hidden staging file beside it.
    expect(await readFile(target, 'utf8')).toBe('old content\n');
    expect(await stagingNames(fixture.ws)).toHaveLength(1);
    expect((await serve.request('fs/close', { handleId })).result).toEqual({});
    expect(sha(await readFile(target))).toBe(sha(data));
    expect((await stat(target)).mode & 0o7777).toBe(0o640);
    expect(await stagingNames(fixture.ws)).toEqual([]);
  });

  it('makes a new file with the umask mode, and an empty one when no block was written', async () => {
    const fresh = join(fixture.ws, 'sub', 'fresh.txt');
    const { handleId } = await openWrite(fresh);
    await serve.request('fs/writeBlock', { handleId, offset: 0, chunk: b64('fresh\n') });
    expect((await serve.request('fs/close', { handleId })).result).toEqual({});
    expect(await readFile(fresh, 'utf8')).toBe('fresh\n');
    expect((await stat(fresh)).mode & 0o777).toBe(0o644);

    const empty = join(fixture.ws, 'sub', 'empty.txt');
    const second = await openWrite(empty);
    expect((await serve.request('fs/close', { handleId: second.handleId })).result).toEqual({});
    expect((await stat(empty)).size).toBe(0);
  });

  it('refuses at open what may not be written, and nothing appears', async () => {
    const before = await snapshotTree(fixture.base);
    const refusals = [
      [join(fixture.outside, 'new.txt'), 'permission_denied'],
      [join(fixture.ro, 'r.txt'), 'permission_denied'],
      [join(fixture.ws, '.git', 'config'), 'protected_path'],
      [join(fixture.ws, 'denied-dir', 'x.txt'), 'permission_denied'],
      [join(fixture.ws, 'link-out'), 'symlink_escape'],
      [join(fixture.ws, 'dirlink-out', 'planted.txt'), 'permission_denied'],
      [join(fixture.ws, 'sub'), 'is_directory'],
      [join(fixture.ws, 'fifo'), 'not_regular_file'],
    ] as const;
    for (const [path, kind] of refusals) {
      const { reply } = await openWrite(path);
      expect(reply.error?.data.errorKind, `${path}: ${JSON.stringify(reply)}`).toBe(kind);
    }
    expect(diffTrees(before, await snapshotTree(fixture.base))).toEqual([]);
  });

  it('publishes nothing when the target directory was swapped for a link to a read-only root after open', async () => {
    const dir = join(fixture.ws, 'swapped');
    await mkdir(dir);
    const { handleId } = await openWrite(join(dir, 'r.txt'));
    await serve.request('fs/writeBlock', { handleId, offset: 0, chunk: b64('overwritten\n') });
    // The attacker moves the directory (and the staging file in it) away and links its name to `ro`.
    await rename(dir, join(fixture.ws, 'swapped-away'));
    await symlink(fixture.ro, dir);
    const before = await snapshotTree(fixture.ro);
    const reply = await serve.request('fs/close', { handleId });
    expect(reply.error?.data.errorKind, JSON.stringify(reply)).toBe('permission_denied');
    expect(await readFile(join(fixture.ro, 'r.txt'), 'utf8')).toBe('read only\n');
    expect(diffTrees(before, await snapshotTree(fixture.ro))).toEqual([]);
  });

  it('refuses a staging file replaced by a link to outside, writing nothing through it', async () => {
    const target = join(fixture.ws, 'victim.txt');
    await writeFile(target, 'victim\n');
    const { handleId } = await openWrite(target);
    const [staging] = await stagingNames(fixture.ws);
    expect(staging).toBeDefined();
    const stagingPath = join(fixture.ws, staging as string);
    await rename(stagingPath, join(fixture.ws, 'stolen.tmp'));
    await symlink(join(fixture.outside, 'secret.txt'), stagingPath);
    const reply = await serve.request('fs/writeBlock', { handleId, offset: 0, chunk: b64('pwned\n') });
    expect(reply.error?.data.errorKind, JSON.stringify(reply)).toBe('not_found');
    expect(await readFile(join(fixture.outside, 'secret.txt'), 'utf8')).toBe(fixture.secretText);
    // Variant: a hard link to another file of the workspace put at the staging name.
    const second = await openWrite(target);
    const staged = (await stagingNames(fixture.ws)).find((name) => name !== staging) as string;
    const secondPath = join(fixture.ws, staged);
    await rename(secondPath, join(fixture.ws, 'stolen2.tmp'));
    await link(join(fixture.ws, 'hello.txt'), secondPath);
    const linked = await serve.request('fs/writeBlock', {
      handleId: second.handleId,
      offset: 0,
      chunk: b64('x'),
    });
    expect(linked.error?.data.errorKind, JSON.stringify(linked)).toBe('not_found');
    expect(await readFile(join(fixture.ws, 'hello.txt'), 'utf8')).toBe('hello sandbox\n');
    expect(await readFile(target, 'utf8')).toBe('victim\n');
  });

  it('leaves the target untouched and removes the staging file when the connection closes unclosed', async () => {
    const target = join(fixture.ws, 'kept.txt');
    await writeFile(target, 'kept\n');
    // Earlier attacks left names the handles could not vouch for; those stay where they are.
    const earlier = await stagingNames(fixture.ws);
    const other = ServeProcess.start([], { env: cliEnv(fixture) });
    await other.handshake();
    const opened = await other.request('fs/open', {
      handleId: 'h',
      path: uri(target),
      mode: 'replace',
      sandbox: context,
    });
    expect(opened.result).toEqual({ handleId: 'h' });
    await other.request('fs/writeBlock', { handleId: 'h', offset: 0, chunk: b64('half-written') });
    const staged = (await stagingNames(fixture.ws)).filter((name) => !earlier.includes(name));
    expect(staged).toHaveLength(1);
    await other.stop();
    expect(await readFile(target, 'utf8')).toBe('kept\n');
    for (const name of staged) await expect(lstat(join(fixture.ws, name))).rejects.toThrow(/ENOENT/);
  });
});
