import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServeProcess, type WireReply } from './fixtures/conformance/serve-process.js';
import { ensureBuilt } from './support/build.js';
import { PRECHECK_MODES, personPath, runCli } from './support/cli.js';

/**
 * fs/readTextFile and fs/edit end to end: the real `fs-sandbox serve` and CLI, real bwrap, real
 * files, each checked on the host afterwards.
 */

let base: string;
let ws: string;
let ro: string;
/** One server with the broker's pre-check, one without (only the kernel and the helper's checks). */
const servers = new Map<boolean, ServeProcess>();

const uri = (path: string) => pathToFileURL(path).href;
const sha256 = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex');
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

function sandbox(): Record<string, unknown> {
  const entry = (path: string, access: string) => ({ path: { type: 'path', path: uri(path) }, access });
  return {
    permissions: {
      type: 'managed',
      network: 'restricted',
      file_system: {
        type: 'restricted',
        entries: [entry(ws, 'write'), entry(ro, 'read'), entry(join(ws, 'denied.txt'), 'deny')],
      },
    },
    cwd: uri(ws),
    windowsSandboxLevel: 'disabled',
  };
}

async function call(method: string, params: Record<string, unknown>, precheck = true): Promise<WireReply> {
  return (servers.get(precheck) as ServeProcess).request(method, { ...params, sandbox: sandbox() });
}

async function result(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const reply = await call(method, params);
  expect(reply.error, JSON.stringify(reply.error)).toBeUndefined();
  return reply.result as Record<string, unknown>;
}

async function refusal(method: string, params: Record<string, unknown>, kind: string, precheck = true) {
  const reply = await call(method, params, precheck);
  expect(reply.error?.data.errorKind, JSON.stringify(reply)).toBe(kind);
  expect(reply.error?.code).toBe(kind === 'invalid_params' ? -32602 : -32600);
  return reply.error as NonNullable<WireReply['error']>;
}

async function fileWith(name: string, content: string | Buffer): Promise<string> {
  const path = join(ws, name);
  await writeFile(path, content);
  return path;
}

const edit = (path: string, edits: unknown[], extra: Record<string, unknown> = {}) => ({
  path: uri(path),
  edits,
  ...extra,
});

beforeAll(async () => {
  ensureBuilt();
  base = await mkdtemp('/tmp/fs-sandbox-text-');
  ws = join(base, 'ws');
  ro = join(base, 'ro');
  await mkdir(ws);
  await mkdir(ro);
  await mkdir(join(ws, '.git'));
  await writeFile(join(ws, '.git', 'config'), '[core]\n\tbare = false\n');
  await writeFile(join(ws, 'denied.txt'), 'secret token\n');
  await writeFile(join(ro, 'readonly.txt'), 'read only\n');
  // Aliases inside the writable root for paths an edit must never change.
  await symlink('.git', join(ws, 'git-alias'));
  await symlink('.git/config', join(ws, 'config-link'));
  await symlink('denied.txt', join(ws, 'denied-link'));
  await symlink(join(ro, 'readonly.txt'), join(ws, 'ro-link'));
  for (const [, precheck] of PRECHECK_MODES) {
    const server = ServeProcess.start(precheck ? [] : ['--no-precheck'], { cwd: ws });
    await server.handshake();
    servers.set(precheck, server);
  }
});

afterAll(async () => {
  for (const server of servers.values()) await server.stop();
  await rm(base, { recursive: true, force: true });
});

describe('fs/readTextFile through fs-sandbox serve (real bwrap)', () => {
  it('reads a CRLF file with a BOM: content without the BOM, its metadata and the hash of its bytes', async () => {
    const bytes = Buffer.concat([BOM, Buffer.from('one\r\ntwo\r\nthree\r\n')]);
    const path = await fileWith('bom-crlf.txt', bytes);
    expect(await result('fs/readTextFile', { path: uri(path) })).toEqual({
      content: 'one\r\ntwo\r\nthree\r\n',
      startLine: 1,
      lineCount: 3,
      totalLines: 3,
      truncated: false,
      encoding: 'utf-8',
      bom: true,
      lineEnding: 'crlf',
      sizeBytes: bytes.length,
      sha256: sha256(bytes),
    });
  });

  it('reads windows: line/limit, head, tail, and maxBytes (truncated)', async () => {
    const path = await fileWith('lines.txt', Array.from({ length: 50 }, (_, i) => `l${i + 1}\n`).join(''));
    expect(await result('fs/readTextFile', { path: uri(path), line: 10, limit: 2 })).toMatchObject({
      content: 'l10\nl11\n',
      startLine: 10,
      lineCount: 2,
      totalLines: 50,
    });
    expect(await result('fs/readTextFile', { path: uri(path), head: 1 })).toMatchObject({ content: 'l1\n' });
    expect(await result('fs/readTextFile', { path: uri(path), tail: 1 })).toMatchObject({
      content: 'l50\n',
      startLine: 50,
    });
    expect(await result('fs/readTextFile', { path: uri(path), maxBytes: 7 })).toMatchObject({
      content: 'l1\nl2\n',
      truncated: true,
    });
  });

  it('refuses binary, too large, mixed windows, and a denied file', async () => {
    await refusal(
      'fs/readTextFile',
      { path: uri(await fileWith('bin.dat', Buffer.from([1, 0, 2]))) },
      'binary_file',
    );
    const huge = await fileWith('huge.txt', '');
    await truncate(huge, 16 * 1024 * 1024 + 1);
    const tooLarge = await refusal('fs/readTextFile', { path: uri(huge) }, 'file_too_large');
    expect(tooLarge.message).toContain('16 MiB');
    await refusal('fs/readTextFile', { path: uri(huge), head: 1, tail: 1 }, 'invalid_params');
    await refusal('fs/readTextFile', { path: uri(join(ws, 'denied.txt')) }, 'permission_denied');
  });
});

describe('fs/edit through fs-sandbox serve (real bwrap)', () => {
  it('edits a CRLF file with LF texts, keeping CRLF, the BOM and the mode', async () => {
    const path = await fileWith('edit-crlf.txt', Buffer.concat([BOM, Buffer.from('a\r\nb\r\nc\r\n')]));
    await chmod(path, 0o640);
    const before = readFileSync(path);
    const reply = await result('fs/edit', edit(path, [{ oldText: 'a\nb', newText: 'A\nB' }]));
    const after = Buffer.concat([BOM, Buffer.from('A\r\nB\r\nc\r\n')]);
    expect(readFileSync(path)).toEqual(after);
    expect(statSync(path).mode & 0o7777).toBe(0o640);
    expect(reply).toEqual({
      sha256Before: sha256(before),
      sha256After: sha256(after),
      replacements: 1,
      diff: `--- ${path}\n+++ ${path}\n@@ -1,3 +1,3 @@\n-a\n-b\n+A\n+B\n c\n`,
    });
  });

  it('each refusal leaves the file as it was: text_not_found, ambiguous_text_match, no_change, invalid_params', async () => {
    const text = 'x = 1\ny = 2\nx = 1\n';
    const path = await fileWith('refusals.txt', text);
    const notFound = await refusal(
      'fs/edit',
      edit(path, [{ oldText: 'y =  2', newText: 'q' }]),
      'text_not_found',
    );
    expect(notFound.data).toMatchObject({ editIndex: 0, closestLine: 2 });
    const ambiguous = await refusal(
      'fs/edit',
      edit(path, [{ oldText: 'x = 1', newText: 'x = 3' }]),
      'ambiguous_text_match',
    );
    expect(ambiguous.data).toMatchObject({ count: 2, lines: [1, 3] });
    await refusal('fs/edit', edit(path, [{ oldText: 'y = 2', newText: 'y = 2' }]), 'no_change');
    await refusal('fs/edit', edit(path, [{ oldText: '', newText: 'z' }]), 'invalid_params');
    // An earlier edit that applied is not written when a later one fails.
    await refusal(
      'fs/edit',
      edit(path, [
        { oldText: 'y = 2', newText: 'y = 5' },
        { oldText: 'absent', newText: '' },
      ]),
      'text_not_found',
    );
    expect(readFileSync(path, 'utf8')).toBe(text);
    const all = await result(
      'fs/edit',
      edit(path, [{ oldText: 'x = 1', newText: 'x = 3', replaceAll: true }]),
    );
    expect(all.replacements).toBe(2);
    expect(readFileSync(path, 'utf8')).toBe('x = 3\ny = 2\nx = 3\n');
  });

  it('dryRun returns the diff and writes nothing', async () => {
    const path = await fileWith('dry.txt', 'keep\n');
    const inode = statSync(path).ino;
    const reply = await result(
      'fs/edit',
      edit(path, [{ oldText: 'keep', newText: 'gone' }], { dryRun: true }),
    );
    expect(reply.diff).toContain('-keep\n+gone\n');
    expect(readFileSync(path, 'utf8')).toBe('keep\n');
    expect(statSync(path).ino).toBe(inode);
  });

  it('a file changed between readTextFile and an edit with its hash is refused (hash_mismatch), the change kept', async () => {
    const path = await fileWith('ledger.txt', 'version 1\n');
    const read = await result('fs/readTextFile', { path: uri(path) });
    await writeFile(path, 'version 2 by someone else\n');
    await refusal(
      'fs/edit',
      edit(path, [{ oldText: 'version', newText: 'v' }], { expectedSha256: read.sha256 }),
      'hash_mismatch',
    );
    expect(readFileSync(path, 'utf8')).toBe('version 2 by someone else\n');
    const fresh = await result('fs/readTextFile', { path: uri(path) });
    await result(
      'fs/edit',
      edit(path, [{ oldText: 'version 2', newText: 'version 3' }], { expectedSha256: fresh.sha256 }),
    );
    expect(readFileSync(path, 'utf8')).toBe('version 3 by someone else\n');
  });
});

describe.each(PRECHECK_MODES)('fs/edit refusals, %s', (_mode, precheck) => {
  it('refuses a read-only path, a denied file and protected metadata, nothing changed', async () => {
    const change = [{ oldText: 'e', newText: 'E' }];
    await refusal('fs/edit', edit(join(ro, 'readonly.txt'), change), 'permission_denied', precheck);
    await refusal('fs/edit', edit(join(ws, 'denied.txt'), change), 'permission_denied', precheck);
    await refusal('fs/edit', edit(join(ws, '.git', 'config'), change), 'protected_path', precheck);
    expect(readFileSync(join(ro, 'readonly.txt'), 'utf8')).toBe('read only\n');
    expect(readFileSync(join(ws, 'denied.txt'), 'utf8')).toBe('secret token\n');
    expect(readFileSync(join(ws, '.git', 'config'), 'utf8')).toBe('[core]\n\tbare = false\n');
  });

  it('refuses an edit through a symlink alias to protected, denied or read-only paths, nothing changed', async () => {
    const change = [{ oldText: 'e', newText: 'E' }];
    const refusedKinds = ['protected_path', 'permission_denied', 'symlink_escape'];
    for (const alias of ['git-alias/config', 'config-link', 'denied-link', 'ro-link']) {
      const reply = await call('fs/edit', edit(join(ws, alias), change), precheck);
      expect(refusedKinds, `${alias}: ${JSON.stringify(reply)}`).toContain(reply.error?.data.errorKind);
    }
    expect(readFileSync(join(ws, '.git', 'config'), 'utf8')).toBe('[core]\n\tbare = false\n');
    expect(readFileSync(join(ws, 'denied.txt'), 'utf8')).toBe('secret token\n');
    expect(readFileSync(join(ro, 'readonly.txt'), 'utf8')).toBe('read only\n');
  });
});

describe('fs-sandbox read and edit (real CLI, sandboxed by default)', () => {
  const env = () => ({ PATH: personPath(), TMPDIR: join(base, 'tmp') });
  const cli = async (args: string[]) => {
    await mkdir(join(base, 'tmp'), { recursive: true });
    return runCli(args, { user: 'root', env: env(), cwd: ws });
  };

  it('read prints the text or a window; a cut window says so on stderr', async () => {
    await fileWith('cli.txt', 'first\nsecond\nthird\n');
    expect(await cli(['read', 'cli.txt'])).toMatchObject({
      code: 0,
      stdout: 'first\nsecond\nthird\n',
      stderr: '',
    });
    expect(await cli(['read', 'cli.txt', '--tail', '1'])).toMatchObject({ code: 0, stdout: 'third\n' });
    expect(await cli(['read', 'cli.txt', '--line', '2', '--limit', '1'])).toMatchObject({
      stdout: 'second\n',
    });
    const cut = await cli(['read', 'cli.txt', '--max-bytes', '8']);
    expect(cut).toMatchObject({ code: 0, stdout: 'first\n' });
    expect(cut.stderr).toBe(
      'fs-sandbox: output cut at 8 bytes: lines 1-1 of 3 shown; use --line/--limit for the rest\n',
    );
    const json = await cli(['read', 'cli.txt', '--head', '1', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ content: 'first\n', totalLines: 3, lineEnding: 'lf' });
    const mixed = await cli(['read', 'cli.txt', '--head', '1', '--tail', '1']);
    expect(mixed).toMatchObject({ code: 1, stdout: '' });
    expect(mixed.stderr).toBe('fs-sandbox: give one of --line/--limit, --head or --tail [invalid_params]\n');
  });

  it('edit prints the diff (escaped for the terminal); --dry-run writes nothing; refusals in CLI words', async () => {
    const path = await fileWith('cli-edit.txt', 'color = red\nsize = 1\ncolor = red\n');
    const dry = await cli([
      'edit',
      'cli-edit.txt',
      '--old',
      'red',
      '--new',
      '\u001b[31mblue',
      '--all',
      '--dry-run',
    ]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('+color = \\x1b[31mblue\n');
    expect(dry.stderr).toBe('fs-sandbox: dry run: nothing was written\n');
    expect(readFileSync(path, 'utf8')).toBe('color = red\nsize = 1\ncolor = red\n');

    const ambiguous = await cli(['edit', 'cli-edit.txt', '--old', 'red', '--new', 'blue']);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toContain('the --old text occurs 2 times');
    expect(ambiguous.stderr).toContain('use edit --all [ambiguous_text_match]');

    const done = await cli(['edit', 'cli-edit.txt', '--old', 'size = 1', '--new', 'size = 2']);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toBe(
      `--- ${path}\n+++ ${path}\n@@ -1,3 +1,3 @@\n color = red\n-size = 1\n+size = 2\n color = red\n`,
    );
    expect(readFileSync(path, 'utf8')).toBe('color = red\nsize = 2\ncolor = red\n');

    const stale = await cli([
      'edit',
      'cli-edit.txt',
      '--old',
      'size',
      '--new',
      's',
      '--expect-sha256',
      sha256('old'),
    ]);
    expect(stale).toMatchObject({ code: 1, stdout: '' });
    expect(stale.stderr).toMatch(/\[hash_mismatch\]\n$/);

    const outside = await cli(['edit', join(ro, 'readonly.txt'), '--old', 'read', '--new', 'write']);
    expect(outside.code).toBe(1);
    expect(outside.stderr).toMatch(/\[permission_denied\]\n$/);
    expect(readFileSync(join(ro, 'readonly.txt'), 'utf8')).toBe('read only\n');
  });
});
