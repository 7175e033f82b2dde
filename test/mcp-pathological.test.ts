import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './support/build.js';
import { connectMcp, type McpConnection, ourServer } from './support/mcp-client.js';

/**
 * Arguments a model sends that used to hold `fs-sandbox mcp` for minutes, and with it every other
 * call (the server has one thread): a glob a backtracking regex explodes on, in `search_files`'
 * pattern and in `excludePatterns` and `directory_tree`'s, and a 30 000-line `oldText` that nearly
 * matches everywhere in a large file (the whitespace-tolerant matcher tried each start line). Each
 * must answer, with a result or a typed error, within 15 s while a read sent after it on the same
 * server answers within 5 s: the bounds, generous deadlines an exponential or quadratic
 * matcher never meets, not timing targets. Real server, real bwrap.
 */

const CATASTROPHIC = '**/*a*a*a*a*a*a*a*a*a*a*a*a*b';
const LONG = 'a'.repeat(200);
const OLD_TEXT_LINES = 30_000;

const linux = process.platform === 'linux';

describe.skipIf(!linux)('fs-sandbox mcp under pathological arguments (Linux: real bwrap)', () => {
  let base: string;
  let root: string;
  let server: McpConnection;

  beforeAll(async () => {
    ensureBuilt();
    base = await mkdtemp('/tmp/fs-sandbox-mcp-patterns-');
    root = join(base, 'ws');
    mkdirSync(join(root, LONG, LONG, LONG), { recursive: true });
    for (let i = 0; i < 50; i++) writeFileSync(join(root, LONG, `${LONG}${i}`), 'x');
    writeFileSync(join(root, LONG, LONG, LONG, `${LONG}b`), 'x');
    writeFileSync(join(root, 'notes.txt'), 'notes\n');
    // 500 000 equal lines: an oldText of 30 000 of them and one other line matches nowhere, after
    // 30 000 comparisons at each of the 470 000 starts for a matcher that tries them in turn.
    writeFileSync(join(root, 'same.txt'), 'x\n'.repeat(500_000));
    // 100 000 indented lines: an unindented run of 30 000 of them matches only once trimmed.
    writeFileSync(
      join(root, 'indented.txt'),
      Array.from({ length: 100_000 }, (_, i) => `    line ${i}\n`).join(''),
    );
    server = await connectMcp(ourServer([root]));
    await server.client.listTools();
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    if (base) await rm(base, { recursive: true, force: true });
  });

  /** The pathological call and a read sent right after it; both replies and how long each took. */
  async function beside(tool: string, args: Record<string, unknown>) {
    const started = Date.now();
    const pathological = server.call(tool, args).then((reply) => ({ reply, ms: Date.now() - started }));
    const other = server
      .call('read_text_file', { path: 'notes.txt' })
      .then((reply) => ({ reply, ms: Date.now() - started }));
    const [slow, fast] = await Promise.all([pathological, other]);
    expect(fast.reply).toMatchObject({ text: 'notes\n', isError: false });
    expect(fast.ms).toBeLessThan(5_000);
    expect(slow.ms).toBeLessThan(15_000);
    console.log(`${tool}: ${slow.ms} ms; the read beside it: ${fast.ms} ms`);
    return slow.reply;
  }

  it('search_files with a catastrophic pattern finds the file it matches', async () => {
    const reply = await beside('search_files', { path: root, pattern: CATASTROPHIC });
    expect(reply.isError, reply.text).toBe(false);
    expect(reply.text).toBe(join(root, LONG, LONG, LONG, `${LONG}b`));
  });

  it('search_files and directory_tree with a catastrophic exclude pattern leave out what it matches', async () => {
    const search = await beside('search_files', {
      path: root,
      pattern: '**',
      excludePatterns: [CATASTROPHIC],
    });
    expect(search.isError, search.text).toBe(false);
    expect(search.text.split('\n')).toContain(join(root, 'notes.txt'));
    expect(search.text).not.toContain(`${LONG}b`);
    const tree = await beside('directory_tree', { path: root, excludePatterns: [CATASTROPHIC] });
    expect(tree.isError, tree.text).toBe(false);
    expect(tree.text).toContain('"notes.txt"');
    expect(tree.text).not.toContain(`${LONG}b"`);
  });

  it('edit_file with a 30 000-line oldText found nowhere is text_not_found, the file unchanged', async () => {
    const oldText = `${'x\n'.repeat(OLD_TEXT_LINES)}y`;
    const reply = await beside('edit_file', { path: 'same.txt', edits: [{ oldText, newText: 'z' }] });
    expect(reply.isError).toBe(true);
    expect(reply.result.structuredContent).toMatchObject({ errorKind: 'text_not_found' });
    expect(readFileSync(join(root, 'same.txt'), 'utf8')).toBe('x\n'.repeat(500_000));
  });

  it('edit_file replacing a 30 000-line run found once trimmed makes the edit and answers', async () => {
    const oldText = Array.from({ length: OLD_TEXT_LINES }, (_, i) => `line ${i + 10_000}`).join('\n');
    const newText = Array.from({ length: OLD_TEXT_LINES }, (_, i) => `changed ${i}`).join('\n');
    const reply = await beside('edit_file', { path: 'indented.txt', edits: [{ oldText, newText }] });
    expect(reply.isError, reply.text.slice(0, 300)).toBe(false);
    expect(reply.text).toMatch(/^```diff\n/);
    const lines = readFileSync(join(root, 'indented.txt'), 'utf8').split('\n');
    expect(lines[9_999]).toBe('    line 9999');
    expect(lines[10_000]).toBe('    changed 0');
    // As the reference: later lines keep their own indentation when oldText's line had none.
    expect(lines[39_999]).toBe('changed 29999');
    expect(lines[40_000]).toBe('    line 40000');
  });
});
