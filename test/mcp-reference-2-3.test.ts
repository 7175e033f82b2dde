import {
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
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

describe.skipIf(!linux)(
  'fs-sandbox mcp against the reference 2.3.0 (Linux only: its sandbox is real bwrap)',
  () => {
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
  },
);

/** Each server's own copy: `ws` (writable), `ro` (its --read-only-dir) and `outside`. */
function makeMarkedFixture(base: string): { ws: string; ro: string; outside: string } {
  const ws = join(base, 'ws');
  const ro = join(base, 'ro');
  const outside = join(base, 'outside');
  for (const [name, content] of Object.entries({
    'ws/notes.txt': 'notes\n',
    'ws/sub/inner.md': '# inner\n',
    'ws/image.png': Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'),
    'ws/data.unknown': Buffer.from([0, 1, 2, 255]),
    'ws/plain.unknown': 'plain text\n',
    'ro/keep.txt': 'keep\n',
    'ws/lib/ro/nested.txt': 'nested\n',
    'ro/deep/keep.json': '{"k":1}\n',
    'outside/secret.txt': 'OUTSIDE SECRET\n',
  })) {
    mkdirSync(join(base, name, '..'), { recursive: true });
    writeFileSync(join(base, name), content);
  }
  symlinkSync('../outside/secret.txt', join(ws, 'link-out'));
  symlinkSync('notes.txt', join(ws, 'link-in'));
  return { ws, ro, outside };
}

describe.skipIf(!linux)(
  'fs-sandbox mcp against the reference 2.3.0: --read-only-dir, file:// resources, --confine-roots (Linux only: its sandbox is real bwrap)',
  () => {
    let base: string;
    let ours: McpConnection;
    let reference: McpConnection;
    const mine = () => join(base, 'ours');
    const theirs = () => join(base, 'ref');
    /** The same call on both, each with its own tree (`R` stands for it), its text with `<ROOT>` back. */
    const both = async (tool: string, args: (root: string) => Record<string, unknown>) => {
      const [a, b] = [await ours.call(tool, args(mine())), await reference.call(tool, args(theirs()))];
      return {
        ours: { ...a, text: a.text.replaceAll(mine(), '<ROOT>') },
        reference: { ...b, text: b.text.replaceAll(theirs(), '<ROOT>') },
      };
    };

    beforeAll(async () => {
      ensureBuilt();
      base = await mkdtemp('/tmp/fs-sandbox-mcp-23-marked-');
      const flags = (root: string) => [
        '--read-only-dir',
        join(root, 'ro'),
        '--read-only-dir',
        join(root, 'ws', 'lib', 'ro'),
        join(root, 'ws'),
      ];
      makeMarkedFixture(mine());
      makeMarkedFixture(theirs());
      [ours, reference] = await Promise.all([
        connectMcp(ourServer(flags(mine()))),
        connectMcp(referenceServer23(flags(theirs()))),
      ]);
    }, 60_000);

    afterAll(async () => {
      await Promise.all([ours?.close(), reference?.close()]);
      if (base) await rm(base, { recursive: true, force: true });
    });

    it('lists the read-only directory as the reference does, reads it, and the sandbox refuses every write there', async () => {
      const listed = await both('list_allowed_directories', () => ({}));
      expect(listed.ours.text).toBe(listed.reference.text);
      expect(listed.ours.text).toContain('Read-only directories');
      const reads = await both('read_text_file', (root) => ({ path: `${root}/ro/deep/keep.json` }));
      expect(reads.ours).toMatchObject({ isError: false, text: reads.reference.text });
      const writes: [string, (root: string) => Record<string, unknown>][] = [
        ['write_file', (root) => ({ path: `${root}/ro/keep.txt`, content: 'changed' })],
        ['write_file', (root) => ({ path: `${root}/ro/new.txt`, content: 'new' })],
        ['append_file', (root) => ({ path: `${root}/ro/keep.txt`, content: 'more' })],
        [
          'edit_file',
          (root) => ({ path: `${root}/ro/keep.txt`, edits: [{ oldText: 'keep', newText: 'x' }] }),
        ],
        ['create_directory', (root) => ({ path: `${root}/ro/made` })],
        ['move_file', (root) => ({ source: `${root}/ro/keep.txt`, destination: `${root}/ws/moved.txt` })],
        ['move_file', (root) => ({ source: `${root}/ws/notes.txt`, destination: `${root}/ro/notes.txt` })],
        ['copy_file', (root) => ({ source: `${root}/ws/notes.txt`, destination: `${root}/ro/copy.txt` })],
        // A read-only directory inside a writable one: written to, or carried off by moving its parent.
        ['write_file', (root) => ({ path: `${root}/ws/lib/ro/nested.txt`, content: 'changed' })],
        ['move_file', (root) => ({ source: `${root}/ws/lib`, destination: `${root}/ws/lib2` })],
      ];
      for (const [tool, args] of writes) {
        const result = await both(tool, args);
        const label = `${tool} ${JSON.stringify(args('<ROOT>'))}`;
        expect({ label, isError: result.reference.isError }).toEqual({ label, isError: true });
        // No textual check of ours knows the marking: the kernel's read-only mount refuses.
        expect({ label, isError: result.ours.isError }).toEqual({ label, isError: true });
        expect(result.ours.text, label).toMatch(/^[a-z_]+: /);
      }
      for (const root of [mine(), theirs()]) {
        expect(readFileSync(join(root, 'ro', 'keep.txt'), 'utf8')).toBe('keep\n');
        expect(readFileSync(join(root, 'ws', 'lib', 'ro', 'nested.txt'), 'utf8')).toBe('nested\n');
        for (const name of [
          'ro/new.txt',
          'ro/made',
          'ro/notes.txt',
          'ro/copy.txt',
          'ws/moved.txt',
          'ws/lib2',
        ])
          expect(existsSync(join(root, name)), `${root} ${name}`).toBe(false);
        expect(existsSync(join(root, 'ws', 'notes.txt'))).toBe(true);
      }
      // The writable directory stays writable.
      const written = await both('write_file', (root) => ({ path: `${root}/ws/fresh.txt`, content: 'ok' }));
      expect(written.ours).toMatchObject({ isError: false, text: written.reference.text });
      // copy_file of a link inside copies the file it leads to; of a link out, nothing.
      const viaLink = await both('copy_file', (root) => ({
        source: `${root}/ws/link-in`,
        destination: `${root}/ws/from-link.txt`,
      }));
      expect(viaLink.ours).toMatchObject({ isError: false, text: viaLink.reference.text });
      const outward = await both('copy_file', (root) => ({
        source: `${root}/ws/link-out`,
        destination: `${root}/ws/from-out.txt`,
      }));
      expect([outward.ours.isError, outward.reference.isError]).toEqual([true, true]);
      for (const root of [mine(), theirs()]) {
        expect(lstatSync(join(root, 'ws', 'from-link.txt')).isFile()).toBe(true);
        expect(readFileSync(join(root, 'ws', 'from-link.txt'), 'utf8')).toBe('notes\n');
        expect(existsSync(join(root, 'ws', 'from-out.txt'))).toBe(false);
      }
    }, 120_000);

    it('serves files as file:// resources through the same sandbox: text, blobs, and the same refusals', async () => {
      const [mineListed, theirsListed] = [
        await ours.client.listResources(),
        await reference.client.listResources(),
      ];
      expect(mineListed.resources).toEqual([]);
      expect(theirsListed.resources).toEqual([]);
      const [mineTemplates, theirsTemplates] = [
        await ours.client.listResourceTemplates(),
        await reference.client.listResourceTemplates(),
      ];
      expect(mineTemplates.resourceTemplates.map((t) => [t.name, t.uriTemplate])).toEqual(
        theirsTemplates.resourceTemplates.map((t) => [t.name, t.uriTemplate]),
      );
      const read = async (connection: McpConnection, root: string, name: string) => {
        const uri = pathToFileURL(join(root, name)).href;
        try {
          const { contents } = await connection.client.readResource({ uri });
          return {
            contents: JSON.parse(JSON.stringify(contents).replaceAll(pathToFileURL(root).href, 'ROOT')),
          };
        } catch (error) {
          return { code: (error as { code?: number }).code };
        }
      };
      for (const name of [
        'ws/notes.txt',
        'ws/sub/inner.md',
        'ws/image.png',
        'ws/data.unknown',
        'ws/plain.unknown',
        'ro/deep/keep.json',
        // Refused: a directory, a missing file, a path outside the allowed directories.
        'ws/sub',
        'ws/missing.txt',
        'outside/secret.txt',
      ]) {
        expect({ name, ...(await read(ours, mine(), name)) }).toEqual({
          name,
          ...(await read(reference, theirs(), name)),
        });
      }
      // The kind travels in the error data.
      const refused = await ours.client
        .readResource({ uri: pathToFileURL(join(mine(), 'ws', 'missing.txt')).href })
        .catch((error: { data?: unknown }) => error.data);
      expect(refused).toMatchObject({ errorKind: 'not_found' });
    }, 60_000);
  },
);

describe.skipIf(!linux)(
  'fs-sandbox mcp --confine-roots against the reference 2.3.0 (Linux only: its sandbox is real bwrap)',
  () => {
    let base: string;
    const servers: McpConnection[] = [];

    beforeAll(async () => {
      ensureBuilt();
      base = await mkdtemp('/tmp/fs-sandbox-mcp-23-confine-');
      makeMarkedFixture(join(base, 'ours'));
      makeMarkedFixture(join(base, 'ref'));
    });

    afterAll(async () => {
      await Promise.all(servers.map((server) => server.close()));
      if (base) await rm(base, { recursive: true, force: true });
    });

    it("narrows the DIRs to the client's roots, drops roots outside them and revokes on roots that name none", async () => {
      const connect = async (server: typeof ourServer, root: string) => {
        const connection = await connectMcp(server(['--confine-roots', join(root, 'ws')]), {
          roots: [
            { uri: pathToFileURL(join(root, 'ws', 'sub')).href },
            { uri: pathToFileURL(join(root, 'outside')).href },
          ],
        });
        servers.push(connection);
        return connection;
      };
      const runs = [
        { root: join(base, 'ours'), connection: await connect(ourServer, join(base, 'ours')) },
        { root: join(base, 'ref'), connection: await connect(referenceServer23, join(base, 'ref')) },
      ];
      const session = async ({ root, connection }: (typeof runs)[number]) => {
        const seen: { text: string; isError: boolean }[] = [];
        const call = async (tool: string, args: Record<string, unknown>) => {
          const { text, isError } = await connection.call(tool, args);
          seen.push({ text: isError ? '<refused>' : text.replaceAll(root, '<ROOT>'), isError });
        };
        await call('list_allowed_directories', {});
        await call('read_text_file', { path: join(root, 'ws', 'sub', 'inner.md') });
        await call('read_text_file', { path: join(root, 'ws', 'notes.txt') });
        await call('read_text_file', { path: join(root, 'outside', 'secret.txt') });
        // A root wider than the DIR is narrowed to it.
        await connection.setRoots([{ uri: pathToFileURL(root).href }]);
        await call('list_allowed_directories', {});
        await call('read_text_file', { path: join(root, 'ws', 'notes.txt') });
        // Roots all outside: access withdrawn.
        await connection.setRoots([{ uri: pathToFileURL(join(root, 'outside')).href }]);
        await call('read_text_file', { path: join(root, 'ws', 'notes.txt') });
        return seen;
      };
      const [mine, theirs] = [await session(runs[0] as never), await session(runs[1] as never)];
      expect(mine).toEqual(theirs);
      expect(mine.map((step) => step.isError)).toEqual([false, false, true, true, false, false, true]);
    }, 60_000);
  },
);

describe.skipIf(!linux)(
  'fs-sandbox mcp bounds a walk and a helper run as the reference bounds its calls (Linux only: its sandbox is real bwrap)',
  () => {
    let base: string;
    let ours: McpConnection;
    let reference: McpConnection;

    beforeAll(async () => {
      ensureBuilt();
      base = await mkdtemp('/tmp/fs-sandbox-mcp-23-bounds-');
      // One more entry than the reference's cap (100 000) visits: both refuse the walk whole.
      const huge = join(base, 'huge');
      mkdirSync(huge);
      // Hard links of a few empty files (a file holds at most 65 000 on ext4): each is an entry to
      // both walkers, and one system call to make.
      for (let i = 0; i <= 100_000; i++) {
        if (i % 50_000 === 0) writeFileSync(join(huge, `f${i}`), '');
        else linkSync(join(huge, `f${i - (i % 50_000)}`), join(huge, `f${i}`));
      }
      mkdirSync(join(base, 'ws'));
      [ours, reference] = await Promise.all([
        connectMcp(ourServer([base])),
        connectMcp(referenceServer23([base])),
      ]);
    }, 120_000);

    afterAll(async () => {
      await Promise.all([ours?.close(), reference?.close()]);
      if (base) await rm(base, { recursive: true, force: true });
    });

    it('refuses search_files and directory_tree past the walk bound, typed, where the reference refuses past its cap', async () => {
      for (const [tool, args] of [
        ['search_files', { path: join(base, 'huge'), pattern: '**/*.none' }],
        ['directory_tree', { path: join(base, 'huge') }],
      ] as const) {
        const [mine, theirs] = [await ours.call(tool, args), await reference.call(tool, args)];
        expect(theirs.isError, theirs.text).toBe(true);
        expect(theirs.text).toContain(`${tool} stopped after visiting 100000 entries`);
        expect(mine.isError, mine.text).toBe(true);
        expect(mine.text).toMatch(new RegExp(`^invalid_request: ${tool} stopped at the walk's bounds`));
        expect(mine.result.structuredContent).toMatchObject({ errorKind: 'invalid_request' });
      }
    }, 120_000);

    it('ends a helper run past 15 s with a typed timeout while other calls answer, leaving nothing behind', async () => {
      // A terabyte of holes: the copy reads zeros for far longer than the bound, and writes none.
      const sparse = join(base, 'ws', 'sparse.bin');
      writeFileSync(sparse, 'head');
      truncateSync(sparse, 1024 ** 4);
      const started = Date.now();
      const copy = ours.call('copy_file', { source: sparse, destination: join(base, 'ws', 'copy.bin') });
      // The server answers meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const askedAt = Date.now();
      const listed = await ours.call('list_allowed_directories', {});
      expect(listed.isError).toBe(false);
      expect(Date.now() - askedAt).toBeLessThan(5000);
      const copied = await copy;
      const took = Date.now() - started;
      expect(copied.isError, copied.text).toBe(true);
      expect(copied.text).toMatch(/^timeout: /);
      expect(took).toBeGreaterThanOrEqual(15_000);
      expect(took).toBeLessThan(40_000);
      expect(readdirSync(join(base, 'ws')).sort()).toEqual(['sparse.bin']);
    }, 60_000);
  },
);
