import { spawn, spawnSync } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, REPO } from './support/build.js';
import { connectMcp, type McpConnection, ourServer, referenceServer } from './support/mcp-client.js';

/**
 * `fs-sandbox mcp` driven by the MCP SDK's own client over stdio, against real bwrap, next to the
 * reference server (`@modelcontextprotocol/server-filesystem`, the pinned devDependency) run on an
 * identical copy of the same fixture tree.
 */

const linux = process.platform === 'linux';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');

/** The fixture: `allowed` (the allowed directory), its prefix-sharing sibling and an outside dir. */
function makeFixture(base: string): string {
  const root = join(base, 'allowed');
  const files: Record<string, string | Buffer> = {
    'README.md': '# Demo\n\nA fixture.\n',
    'notes.txt': 'one\ntwo\nthree\nfour\nfive',
    'src/a.ts': 'export const a = 1;\n',
    'src/b.ts': "function greet() {\n    console.log('hi');\n    return 1;\n}\n",
    'src/lib/util.js': 'module.exports = {};\n',
    'node_modules/pkg/index.js': 'x\n',
    'docs/guide.md': 'guide\n',
    'docs/big.txt': 'z'.repeat(3000),
    'image.png': PNG,
    'data.bin': Buffer.from([0, 1, 2, 3, 255]),
    '.hidden': 'h\n',
    'crlf.txt': 'first\r\nsecond\r\n',
  };
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(join(root, name, '..'), { recursive: true });
    writeFileSync(join(root, name), content);
  }
  mkdirSync(join(root, 'empty'));
  mkdirSync(join(base, 'allowed_evil'));
  writeFileSync(join(base, 'allowed_evil', 'secret.txt'), 'EVIL SIBLING SECRET\n');
  mkdirSync(join(base, 'outside'));
  writeFileSync(join(base, 'outside', 'secret.txt'), 'OUTSIDE SECRET\n');
  return root;
}

interface Step {
  tool: string;
  args: Record<string, unknown>;
  /** Why ours answers differently (and how it answers); absent: the same text and error flag. */
  differs?: { why: string; ours: (text: string, isError: boolean) => void };
  /** For steps whose text holds per-copy facts (times): what to compare. */
  normalize?: (text: string) => string;
}

/** The same keys in the same order, times masked (each copy has its own); `hardLinks` is 2.3.0's. */
const infoWithoutTimes = (text: string) =>
  text
    .split('\n')
    .filter((line) => !line.startsWith('hardLinks:'))
    .map((line) => line.replace(/^(created|modified|accessed): .*/, '$1: <TIME>'))
    .join('\n');

/**
 * The reference lists entries in the file system's order (readdir's), ours by name: listings are
 * compared as sets of lines, trees with each directory's children sorted.
 */
const linesAnyOrder = (text: string) => text.split('\n').sort().join('\n');
interface TreeNode {
  name: string;
  children?: TreeNode[];
}
const sortTree = (nodes: TreeNode[]): TreeNode[] =>
  [...nodes]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((node) => (node.children ? { ...node, children: sortTree(node.children) } : node));
const treeAnyOrder = (text: string) => JSON.stringify(sortTree(JSON.parse(text) as TreeNode[]), null, 2);

const ORDER_FREE: Record<string, (text: string) => string> = {
  list_directory: linesAnyOrder,
  list_directory_with_sizes: linesAnyOrder,
  search_files: linesAnyOrder,
  directory_tree: treeAnyOrder,
};

/** The scripted session; `R` is the allowed directory, written as each server sees it. */
function script(R: string): Step[] {
  return [
    { tool: 'list_allowed_directories', args: {} },
    { tool: 'list_directory', args: { path: R } },
    { tool: 'list_directory', args: { path: 'src' } },
    { tool: 'list_directory_with_sizes', args: { path: R } },
    { tool: 'list_directory_with_sizes', args: { path: R, sortBy: 'size' } },
    { tool: 'list_directory_with_sizes', args: { path: `${R}/docs` } },
    { tool: 'directory_tree', args: { path: R } },
    { tool: 'directory_tree', args: { path: R, excludePatterns: ['node_modules'] } },
    { tool: 'directory_tree', args: { path: R, excludePatterns: ['**/*.md', 'src/lib'] } },
    { tool: 'read_text_file', args: { path: `${R}/src/b.ts` } },
    { tool: 'read_text_file', args: { path: 'notes.txt', head: 2 } },
    { tool: 'read_text_file', args: { path: 'notes.txt', tail: 2 } },
    {
      tool: 'read_text_file',
      args: { path: 'notes.txt', head: 2, tail: 2 },
      differs: kindPrefixed('invalid_params'),
    },
    {
      tool: 'read_text_file',
      args: { path: 'src/a.ts', tail: 1 },
      differs: {
        why: 'tail counts lines as head does, as 2.3.0 does; 2026.8.31 counts the empty string after the final newline as a line (its tail 1 is empty)',
        ours: (text) => expect(text).toBe('export const a = 1;'),
      },
    },
    { tool: 'read_file', args: { path: 'README.md' } },
    { tool: 'read_multiple_files', args: { paths: [`${R}/src/a.ts`, 'README.md'] } },
    {
      tool: 'read_multiple_files',
      args: { paths: ['src/a.ts', 'missing.txt'] },
      differs: {
        why: "a failed file's error is our error kind and message, not Node's ENOENT text",
        ours: (text) =>
          expect(text).toMatch(
            /^src\/a\.ts:\nexport const a = 1;\n\n\n---\nmissing\.txt: Error - not_found: /,
          ),
      },
    },
    { tool: 'read_media_file', args: { path: 'image.png' } },
    { tool: 'read_media_file', args: { path: `${R}/data.bin` } },
    { tool: 'write_file', args: { path: 'new.txt', content: 'alpha\nbeta\n' } },
    { tool: 'read_text_file', args: { path: 'new.txt' } },
    { tool: 'write_file', args: { path: `${R}/new.txt`, content: 'alpha\nbeta\ngamma\n' } },
    {
      tool: 'edit_file',
      args: { path: 'new.txt', edits: [{ oldText: 'beta', newText: 'BETA' }], dryRun: true },
    },
    { tool: 'read_text_file', args: { path: 'new.txt' } },
    { tool: 'edit_file', args: { path: 'new.txt', edits: [{ oldText: 'beta', newText: 'BETA' }] } },
    {
      tool: 'edit_file',
      args: {
        path: 'src/b.ts',
        edits: [{ oldText: "console.log('hi');\nreturn 1;", newText: "console.log('hello');\n  return 2;" }],
      },
    },
    { tool: 'read_text_file', args: { path: 'src/b.ts' } },
    {
      tool: 'edit_file',
      args: {
        path: 'new.txt',
        edits: [
          { oldText: 'alpha', newText: 'ALPHA' },
          { oldText: 'gamma\n', newText: 'gamma\ndelta\n' },
        ],
      },
    },
    {
      tool: 'edit_file',
      args: { path: 'new.txt', edits: [{ oldText: 'no such text', newText: 'x' }] },
      differs: kindPrefixed('text_not_found', 'Could not find exact match for edit:\nno such text'),
    },
    // Same diff; the reference rewrites the file with LF endings, ours keeps its CRLF (checked below).
    { tool: 'edit_file', args: { path: 'crlf.txt', edits: [{ oldText: 'second', newText: 'SECOND' }] } },
    { tool: 'create_directory', args: { path: 'made/deep/er' } },
    { tool: 'create_directory', args: { path: `${R}/made` } },
    { tool: 'move_file', args: { source: 'new.txt', destination: 'made/deep/er/moved.txt' } },
    {
      tool: 'move_file',
      args: { source: 'notes.txt', destination: 'README.md' },
      differs: {
        why: 'the reference replaces an existing destination (POSIX rename), against its own description; ours refuses',
        ours: (text, isError) => {
          expect(isError).toBe(true);
          expect(text).toMatch(/^already_exists: |^file_already_exists: /);
        },
      },
    },
    { tool: 'search_files', args: { path: R, pattern: '**/*.ts' } },
    { tool: 'search_files', args: { path: R, pattern: '*.md' } },
    { tool: 'search_files', args: { path: R, pattern: '**/*.js', excludePatterns: ['node_modules'] } },
    { tool: 'search_files', args: { path: 'src', pattern: '**' } },
    { tool: 'search_files', args: { path: R, pattern: '**/*.none' } },
    { tool: 'get_file_info', args: { path: 'src/a.ts' }, normalize: infoWithoutTimes },
    { tool: 'get_file_info', args: { path: 'made' }, normalize: infoWithoutTimes },
    { tool: 'list_directory', args: { path: R } },
    { tool: 'directory_tree', args: { path: 'made' } },
    { tool: 'read_text_file', args: { path: '/etc/hostname' }, differs: kindPrefixed('permission_denied') },
    {
      tool: 'read_text_file',
      args: { path: `${R}_evil/secret.txt` },
      differs: kindPrefixed('permission_denied'),
    },
    { tool: 'list_directory', args: { path: '../allowed_evil' }, differs: kindPrefixed('permission_denied') },
    {
      tool: 'write_file',
      args: { path: `${R}_evil/planted.txt`, content: 'x' },
      differs: kindPrefixed('permission_denied'),
    },
  ];
}

/** Both refuse; ours says so with the kind first (the reference's text is its own message). */
function kindPrefixed(kind: string, message?: string): NonNullable<Step['differs']> {
  return {
    why: 'the error text starts with the error kind',
    ours: (text, isError) => {
      expect(isError).toBe(true);
      expect(text.startsWith(`${kind}: `)).toBe(true);
      if (message !== undefined) expect(text).toBe(`${kind}: ${message}`);
    },
  };
}

describe.skipIf(!linux)('fs-sandbox mcp against the reference server (Linux: real bwrap)', () => {
  let base: string;
  let ours: McpConnection;
  let reference: McpConnection;
  let ourRoot: string;
  let referenceRoot: string;

  beforeAll(async () => {
    ensureBuilt();
    base = await mkdtemp('/tmp/fs-sandbox-mcp-');
    ourRoot = makeFixture(join(base, 'ours'));
    referenceRoot = makeFixture(join(base, 'ref'));
    [ours, reference] = await Promise.all([
      connectMcp(ourServer([ourRoot])),
      connectMcp(referenceServer([referenceRoot])),
    ]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([ours?.close(), reference?.close()]);
    if (base) await rm(base, { recursive: true, force: true });
  });

  it('keeps the MCP SDK off the start-up path of the other commands (required on demand in the bundle)', () => {
    const bundle = readFileSync(join(REPO, 'packages/cli/dist/cli.cjs'), 'utf8');
    const requires = [...bundle.matchAll(/(.{0,40})require\("@modelcontextprotocol\/sdk[^"]*"\)/g)];
    expect(requires.length).toBeGreaterThan(0);
    // Each inside the promise an import() became, never at the top of the bundle.
    for (const [, before] of requires) expect(before).toMatch(/Promise\.resolve\(\)\.then\(\(\)=>\w*\($/);
  });

  it("lists the reference tools with the same names, input schemas and annotations, plus 2.3.0's two and three of its own", async () => {
    const [{ tools: ourTools }, { tools: referenceTools }] = await Promise.all([
      ours.client.listTools(),
      reference.client.listTools(),
    ]);
    expect(referenceTools).toHaveLength(14);
    const byName = new Map(ourTools.map((tool) => [tool.name, tool]));
    for (const tool of referenceTools) {
      const our = byName.get(tool.name);
      expect(our, tool.name).toBeDefined();
      // directory_tree also takes 2.3.0's depth (test/mcp-reference-2-3.test.ts).
      const { depth: _depth, ...ourProperties } = (our?.inputSchema.properties ?? {}) as Record<
        string,
        unknown
      >;
      expect({ ...our?.inputSchema, properties: ourProperties }, tool.name).toEqual(tool.inputSchema);
      expect(our?.annotations, tool.name).toEqual(tool.annotations);
      expect(our?.title, tool.name).toBe(tool.title);
    }
    expect(
      ourTools.map((tool) => tool.name).filter((name) => !referenceTools.some((t) => t.name === name)),
    ).toEqual(['append_file', 'copy_file', 'search_content', 'apply_patch', 'delete_file']);
  });

  it('answers a scripted session of tool calls with the reference text, except where it is stricter', async () => {
    const ourSteps = script(ourRoot);
    const referenceSteps = script(referenceRoot);
    expect(ourSteps.length).toBeGreaterThanOrEqual(30);
    const differences: string[] = [];
    for (const [index, step] of ourSteps.entries()) {
      const referenceStep = referenceSteps[index] as Step;
      const [mine, theirs] = [
        await ours.call(step.tool, step.args),
        await reference.call(referenceStep.tool, referenceStep.args),
      ];
      const label = `#${index} ${step.tool} ${JSON.stringify(step.args)}`;
      const order = mine.isError ? undefined : ORDER_FREE[step.tool];
      const normalize = (text: string, root: string) =>
        [step.normalize, order].reduce((t, f) => (f ? f(t) : t), text.replaceAll(root, '<ROOT>'));
      if (step.differs) {
        step.differs.ours(mine.text.replaceAll(ourRoot, '<ROOT>'), mine.isError);
        differences.push(`${label}: ${step.differs.why}`);
        continue;
      }
      expect({ label, isError: mine.isError, text: normalize(mine.text, ourRoot) }).toEqual({
        label,
        isError: theirs.isError,
        text: normalize(theirs.text, referenceRoot),
      });
      if (step.tool === 'read_media_file') {
        expect(JSON.stringify(mine.result.content).replaceAll(ourRoot, '<ROOT>')).toBe(
          JSON.stringify(theirs.result.content).replaceAll(referenceRoot, '<ROOT>'),
        );
      }
    }
    expect(differences.length).toBeLessThan(ourSteps.length / 4);
    // Both trees end the same, and nothing was planted beside them.
    for (const name of ['made/deep/er/moved.txt', 'src/b.ts', 'README.md']) {
      expect(readFileSync(join(ourRoot, name), 'utf8'), name).toBe(
        readFileSync(join(referenceRoot, name), 'utf8'),
      );
    }
    expect(existsSync(join(base, 'ours', 'allowed_evil', 'planted.txt'))).toBe(false);
    expect(readFileSync(join(ourRoot, 'crlf.txt'), 'utf8')).toBe('first\r\nSECOND\r\n');
    expect(readFileSync(join(referenceRoot, 'crlf.txt'), 'utf8')).toBe('first\nSECOND\n');
  }, 120_000);

  it('gives its error results the kind in the text and in structuredContent', async () => {
    const { result } = await ours.call('read_text_file', { path: 'does/not/exist.txt' });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ errorKind: 'not_found' });
    const bad = await ours.call('read_text_file', { path: 42 });
    expect(bad.isError).toBe(true);
    expect(bad.text).toMatch(/^invalid_params: /);
    expect(bad.result.structuredContent).toMatchObject({ errorKind: 'invalid_params' });
  });
});

/** The content of every ok result; no refusal may carry a secret either. */
function expectNoSecret(results: { text: string }[], secret: string): void {
  for (const { text } of results) expect(text).not.toContain(secret);
}

describe.skipIf(!linux)('fs-sandbox mcp refuses what the reference let through (Linux: real bwrap)', () => {
  let base: string;
  let root: string;
  let server: McpConnection;
  const outside = () => join(base, 'outside');

  beforeAll(async () => {
    ensureBuilt();
    base = await mkdtemp('/tmp/fs-sandbox-mcp-attack-');
    root = makeFixture(base);
    writeFileSync(join(root, 'secret.env'), 'DENIED TOKEN\n');
    linkSync(join(root, 'secret.env'), join(root, 'alias.txt'));
    symlinkSync('../allowed_evil', join(root, 'link-evil'));
    symlinkSync('../outside/secret.txt', join(root, 'link-out'));
    symlinkSync('../outside', join(root, 'dir-out'));
    symlinkSync('../outside/created.txt', join(root, 'dangling'));
    server = await connectMcp(ourServer(['--deny', join(root, 'secret.env'), root]));
    // The SDK's client checks structured results against the output schemas it listed, errors too.
    await server.client.listTools();
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    if (base) await rm(base, { recursive: true, force: true });
  });

  it('refuses a sibling directory sharing the allowed prefix (CVE-2025-53110), however it is named', async () => {
    const results = [
      await server.call('read_text_file', { path: `${root}_evil/secret.txt` }),
      await server.call('read_text_file', { path: '../allowed_evil/secret.txt' }),
      await server.call('list_directory', { path: `${root}_evil` }),
      await server.call('write_file', { path: `${root}_evil/planted.txt`, content: 'x' }),
      // Through a link inside the root the name passes any textual check: the kernel refuses.
      await server.call('read_text_file', { path: 'link-evil/secret.txt' }),
      await server.call('list_directory', { path: 'link-evil' }),
      await server.call('write_file', { path: 'link-evil/planted.txt', content: 'x' }),
    ];
    for (const result of results) expect(result.isError, result.text).toBe(true);
    expectNoSecret(results, 'EVIL SIBLING SECRET');
    expect(existsSync(join(base, 'allowed_evil', 'planted.txt'))).toBe(false);
  });

  it('refuses symlinks inside that lead outside, dangling ones included (CVE-2025-53109)', async () => {
    const results = [
      await server.call('read_text_file', { path: 'link-out' }),
      await server.call('read_media_file', { path: 'link-out' }),
      await server.call('edit_file', { path: 'link-out', edits: [{ oldText: 'OUTSIDE', newText: 'owned' }] }),
      await server.call('read_text_file', { path: 'dir-out/secret.txt' }),
      await server.call('write_file', { path: 'dir-out/planted.txt', content: 'x' }),
      await server.call('create_directory', { path: 'dir-out/made' }),
      await server.call('move_file', { source: 'notes.txt', destination: 'dir-out/notes.txt' }),
    ];
    for (const result of results) expect(result.isError, result.text).toBe(true);
    expectNoSecret(results, 'OUTSIDE SECRET');
    // A tool error in the media tool's own output shape, not a protocol error about the shape.
    expect(results[1]?.result.structuredContent).toEqual({ content: [], errorKind: 'not_found' });
    const badArguments = await server.call('read_media_file', { path: 42 });
    expect(badArguments.text).toMatch(/^invalid_params: /);
    expect(badArguments.result.structuredContent).toEqual({ content: [], errorKind: 'invalid_params' });
    // A write through a dangling link (the old check fell back to its parent) never lands outside.
    await server.call('write_file', { path: 'dangling', content: 'planted' });
    await server.call('write_file', { path: 'link-out', content: 'planted' });
    expect(existsSync(join(outside(), 'created.txt'))).toBe(false);
    expect(readFileSync(join(outside(), 'secret.txt'), 'utf8')).toBe('OUTSIDE SECRET\n');
    expect(existsSync(join(outside(), 'planted.txt'))).toBe(false);
    expect(existsSync(join(outside(), 'made'))).toBe(false);
    expect(existsSync(join(root, 'notes.txt'))).toBe(true);
  });

  it('reads no host configuration through a link inside (the helper needs the minimal roots, the client gets only its roots)', async () => {
    symlinkSync('/etc/shadow', join(root, 'shadow-link'));
    symlinkSync('/etc', join(root, 'etc-link'));
    try {
      const results = [
        await server.call('read_text_file', { path: 'shadow-link' }),
        await server.call('read_text_file', { path: 'etc-link/passwd' }),
        await server.call('list_directory', { path: 'etc-link' }),
        await server.call('search_content', { path: 'etc-link', pattern: 'root' }),
      ];
      for (const result of results) expect(result.isError, result.text).toBe(true);
      expectNoSecret(results, 'root:');
    } finally {
      rmSync(join(root, 'shadow-link'));
      rmSync(join(root, 'etc-link'));
    }
  });

  it('never reads or writes outside through a name swapped between a file and a link while it runs', async () => {
    const swap = join(root, 'swap');
    writeFileSync(swap, 'INSIDE\n');
    const script = `const fs = require('fs'); const s = ${JSON.stringify(swap)};
      const end = Date.now() + 60000;
      while (Date.now() < end) { try {
        fs.symlinkSync('../outside/secret.txt', s + '.l'); fs.renameSync(s + '.l', s);
        fs.writeFileSync(s + '.f', 'INSIDE\\n'); fs.renameSync(s + '.f', s);
      } catch {} }`;
    const toggler = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
    try {
      const results: { text: string; isError: boolean }[] = [];
      for (let i = 0; i < 25; i++) {
        results.push(await server.call('read_text_file', { path: 'swap' }));
        results.push(
          await server.call('edit_file', { path: 'swap', edits: [{ oldText: 'OUTSIDE', newText: 'owned' }] }),
        );
        results.push(await server.call('write_file', { path: 'swap', content: 'INSIDE\n' }));
      }
      expectNoSecret(results, 'OUTSIDE SECRET');
      const reads = results.filter((result, i) => i % 3 === 0 && !result.isError);
      // Some reads met the file; each of those saw only its content (a link is refused or absent).
      expect(reads.length).toBeGreaterThan(0);
      for (const result of reads) expect(result.text).toBe('INSIDE\n');
    } finally {
      toggler.kill('SIGKILL');
    }
    expect(readFileSync(join(outside(), 'secret.txt'), 'utf8')).toBe('OUTSIDE SECRET\n');
  }, 120_000);

  it("refuses a hard link to a --deny'd file by its identity, not its name", async () => {
    const results = [
      await server.call('read_text_file', { path: 'secret.env' }),
      await server.call('read_text_file', { path: 'alias.txt' }),
      await server.call('read_media_file', { path: 'alias.txt' }),
      await server.call('read_multiple_files', { paths: ['alias.txt'] }),
    ];
    for (const result of results.slice(0, 3)) expect(result.isError, result.text).toBe(true);
    expect(results[3]?.text).toMatch(/^alias\.txt: Error - /);
    expectNoSecret(results, 'DENIED TOKEN');
    // A write to the other name replaces that name only; the denied file keeps its content.
    await server.call('write_file', { path: 'alias.txt', content: 'replaced\n' });
    expect(readFileSync(join(root, 'secret.env'), 'utf8')).toBe('DENIED TOKEN\n');
  });
  it('with --read-only reads the allowed directories and writes nothing there', async () => {
    const readOnly = await connectMcp(ourServer(['--read-only', root]));
    try {
      expect((await readOnly.call('read_text_file', { path: 'README.md' })).text).toBe(
        '# Demo\n\nA fixture.\n',
      );
      const refusals = [
        await readOnly.call('write_file', { path: 'README.md', content: 'changed' }),
        await readOnly.call('create_directory', { path: 'new-dir' }),
        await readOnly.call('delete_file', { path: 'notes.txt' }),
        await readOnly.call('edit_file', { path: 'README.md', edits: [{ oldText: 'Demo', newText: 'X' }] }),
      ];
      for (const result of refusals) expect(result.isError, result.text).toBe(true);
      expect(readFileSync(join(root, 'README.md'), 'utf8')).toBe('# Demo\n\nA fixture.\n');
      expect(existsSync(join(root, 'new-dir'))).toBe(false);
      expect(existsSync(join(root, 'notes.txt'))).toBe(true);
    } finally {
      await readOnly.close();
    }
  });
});

describe.skipIf(!linux)(
  'fs-sandbox mcp follows the client roots when no DIR is given (Linux: real bwrap)',
  () => {
    let base: string;
    const dir = (name: string) => join(base, name);

    beforeAll(async () => {
      ensureBuilt();
      base = await mkdtemp('/tmp/fs-sandbox-mcp-roots-');
      for (const name of ['one', 'two']) {
        mkdirSync(dir(name));
        writeFileSync(join(dir(name), `${name}.txt`), `${name}\n`);
      }
    });

    afterAll(async () => {
      if (base) await rm(base, { recursive: true, force: true });
    });

    it('asks roots/list at start and rebuilds its sandbox on roots/list_changed', async () => {
      const server = await connectMcp(ourServer([]), {
        roots: [{ uri: pathToFileURL(dir('one')).href, name: 'one' }],
      });
      try {
        expect((await server.call('list_allowed_directories')).text).toBe(
          `Allowed directories:\n${dir('one')}`,
        );
        expect((await server.call('read_text_file', { path: join(dir('one'), 'one.txt') })).text).toBe(
          'one\n',
        );
        expect((await server.call('read_text_file', { path: join(dir('two'), 'two.txt') })).isError).toBe(
          true,
        );
        await server.setRoots([{ uri: pathToFileURL(dir('two')).href }]);
        expect((await server.call('list_allowed_directories')).text).toBe(
          `Allowed directories:\n${dir('two')}`,
        );
        expect((await server.call('read_text_file', { path: 'two.txt' })).text).toBe('two\n');
        const old = await server.call('read_text_file', { path: join(dir('one'), 'one.txt') });
        expect(old.isError).toBe(true);
        expect(old.text).toMatch(/^permission_denied: /);
        // Roots that name nothing usable, once the client's are in force, withdraw every
        // directory (as the reference's 2.3.0 does; 2026.8.31 kept the previous ones).
        await server.setRoots([{ uri: pathToFileURL(dir('missing')).href }]);
        expect((await server.call('list_allowed_directories')).text).toBe('Allowed directories:\n');
        const revoked = await server.call('read_text_file', { path: join(dir('two'), 'two.txt') });
        expect(revoked.isError).toBe(true);
        expect(revoked.text).toMatch(/^permission_denied: /);
      } finally {
        await server.close();
      }
    });

    it('keeps the DIR operands when they are given, whatever roots the client offers', async () => {
      const server = await connectMcp(ourServer([dir('one')]), {
        roots: [{ uri: pathToFileURL(dir('two')).href }],
      });
      try {
        expect((await server.call('list_allowed_directories')).text).toBe(
          `Allowed directories:\n${dir('one')}`,
        );
        await server.setRoots([{ uri: pathToFileURL(dir('two')).href }]);
        expect((await server.call('read_text_file', { path: join(dir('two'), 'two.txt') })).isError).toBe(
          true,
        );
      } finally {
        await server.close();
      }
    });

    it('exits with a usage error when no DIR given names a directory, as the reference does', () => {
      const run = spawnSync(process.execPath, ourServer([dir('missing'), join(dir('one'), 'one.txt')]), {
        input: '',
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(run.status).toBe(2);
      expect(run.stderr).toContain('none of the directories is accessible');
      expect(run.stdout).toBe('');
    });

    it('refuses every call, with its kind, when there is neither a DIR nor a client root', async () => {
      const server = await connectMcp(ourServer([]));
      try {
        const result = await server.call('read_text_file', { path: join(dir('one'), 'one.txt') });
        expect(result.isError).toBe(true);
        expect(result.result.structuredContent).toMatchObject({ errorKind: 'permission_denied' });
      } finally {
        await server.close();
      }
    });
  },
);
