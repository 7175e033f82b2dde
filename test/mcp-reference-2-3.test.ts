import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './support/build.js';
import { connectMcp, type McpConnection, ourServer, referenceServer23 } from './support/mcp-client.js';

/**
 * The tools the reference added in 2.3.0 (pinned as an npm alias beside 2026.8.31), driven on both
 * servers over identical trees: the same text and error flag, and the same files afterwards.
 */

const linux = process.platform === 'linux';

function makeFixture(root: string): void {
  mkdirSync(join(root, 'src', 'lib', 'deep'), { recursive: true });
  writeFileSync(join(root, 'log.txt'), 'one\n');
  writeFileSync(join(root, 'src', 'a.ts'), 'export const a = 1;\n');
  writeFileSync(join(root, 'src', 'lib', 'b.ts'), 'b\n');
  writeFileSync(join(root, 'src', 'lib', 'deep', 'c.ts'), 'c\n');
}

/** JSON schema without its prose: the shape a client decodes. */
function shape(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(shape);
  if (schema === null || typeof schema !== 'object') return schema;
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([key]) => key !== 'description' && key !== '$schema')
      .map(([key, value]) => [key, shape(value)]),
  );
}

describe.skipIf(!linux)('fs-sandbox mcp against the reference 2.3.0 (Linux: real bwrap)', () => {
  let base: string;
  let ours: McpConnection;
  let reference: McpConnection;
  const ourRoot = () => join(base, 'ours');
  const referenceRoot = () => join(base, 'ref');

  beforeAll(async () => {
    ensureBuilt();
    base = await mkdtemp('/tmp/fs-sandbox-mcp-23-');
    makeFixture(ourRoot());
    makeFixture(referenceRoot());
    [ours, reference] = await Promise.all([
      connectMcp(ourServer([ourRoot()])),
      connectMcp(referenceServer23([referenceRoot()])),
    ]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([ours?.close(), reference?.close()]);
    if (base) await rm(base, { recursive: true, force: true });
  });

  it('has every 2.3.0 tool, the new ones with its input schemas', async () => {
    const [{ tools: ourTools }, { tools: referenceTools }] = await Promise.all([
      ours.client.listTools(),
      reference.client.listTools(),
    ]);
    const byName = new Map(ourTools.map((tool) => [tool.name, tool]));
    for (const tool of referenceTools) expect(byName.has(tool.name), tool.name).toBe(true);
    for (const name of ['append_file', 'copy_file']) {
      const theirs = referenceTools.find((tool) => tool.name === name);
      expect(shape(byName.get(name)?.inputSchema), name).toEqual(shape(theirs?.inputSchema));
      expect(byName.get(name)?.annotations, name).toEqual(theirs?.annotations);
    }
    // 2.3.0 has depth beside 2026.8.31's properties.
    const tree = byName.get('directory_tree')?.inputSchema as { properties: Record<string, unknown> };
    expect(Object.keys(tree.properties).sort()).toEqual(['depth', 'excludePatterns', 'path']);
  });

  it('answers append_file, copy_file, directory_tree with depth and get_file_info as the reference does', async () => {
    const steps: [string, (root: string) => Record<string, unknown>][] = [
      ['append_file', () => ({ path: 'log.txt', content: 'two\n' })],
      ['append_file', () => ({ path: 'new.log', content: 'first' })],
      ['append_file', (root) => ({ path: `${root}/new.log`, content: ' second' })],
      ['copy_file', () => ({ source: 'src/a.ts', destination: 'copy.ts' })],
      ['copy_file', () => ({ source: 'src/a.ts', destination: 'src/lib/a.ts' })],
      ['directory_tree', (root) => ({ path: root, depth: 1 })],
      ['directory_tree', () => ({ path: 'src', depth: 2 })],
      ['directory_tree', () => ({ path: 'src', depth: 5, excludePatterns: ['deep'] })],
    ];
    for (const [tool, args] of steps) {
      const [mine, theirs] = [
        await ours.call(tool, args(ourRoot())),
        await reference.call(tool, args(referenceRoot())),
      ];
      const label = `${tool} ${JSON.stringify(args('<ROOT>'))}`;
      expect({ label, isError: mine.isError, text: mine.text.replaceAll(ourRoot(), '<ROOT>') }).toEqual({
        label,
        isError: theirs.isError,
        text: theirs.text.replaceAll(referenceRoot(), '<ROOT>'),
      });
    }
    for (const name of ['log.txt', 'new.log', 'copy.ts', 'src/lib/a.ts']) {
      expect(readFileSync(join(ourRoot(), name), 'utf8'), name).toBe(
        readFileSync(join(referenceRoot(), name), 'utf8'),
      );
    }
    // get_file_info: the same keys in the same order, hardLinks included.
    const keys = (text: string) => text.split('\n').map((line) => line.split(':')[0]);
    const [mine, theirs] = [
      await ours.call('get_file_info', { path: 'copy.ts' }),
      await reference.call('get_file_info', { path: 'copy.ts' }),
    ];
    expect(keys(mine.text)).toEqual(keys(theirs.text));
    expect(mine.text).toContain('hardLinks: 1');
  }, 120_000);

  it('refuses what the reference refuses: a copy over an existing file, a directory copied', async () => {
    for (const args of [
      { source: 'src/a.ts', destination: 'log.txt' },
      { source: 'src', destination: 'src-copy' },
    ]) {
      const [mine, theirs] = [await ours.call('copy_file', args), await reference.call('copy_file', args)];
      expect(theirs.isError, theirs.text).toBe(true);
      expect(mine.isError, mine.text).toBe(true);
      expect(mine.text).toMatch(/^(file_already_exists|is_directory): /);
    }
    expect(readFileSync(join(ourRoot(), 'log.txt'), 'utf8')).toBe('one\ntwo\n');
  });
});
