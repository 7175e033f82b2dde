import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RIPGREP_FIXED_ARGS, RIPGREP_THREADS } from '@fs-sandbox/helper';
import { decodePathBytes, nativeToPathUri } from '@fs-sandbox/policy';
import { rgPath } from '@vscode/ripgrep';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './support/build.js';
import { callMethod, personPath, runCli } from './support/cli.js';

/**
 * fs/search and fs/glob through the real `fs-sandbox` CLI and real bwrap, against ripgrep run
 * directly on the host (the same @vscode/ripgrep binary, the same options): the sandboxed results
 * must be exactly the host's minus the denied directory and the deny-glob matches, and no byte of
 * those (nor of the file behind the symlink to outside) may appear anywhere in any reply.
 *
 *   proj/a.txt                 three matching lines among others (context)
 *   proj/.gitignore            ignores ignored.txt and build/
 *   proj/sub/.ignore           ignores local.txt (a nested ignore file)
 *   proj/.hidden/h.txt, .dot   hidden
 *   proj/secret/s.txt          denied directory
 *   proj/keys/k.pem            matched by the deny glob proj/keys/*.pem
 *   proj/link-out -> outside   symlink to outside, which holds the pattern too
 *   proj/bin.dat               binary (NUL byte)
 *   proj/big.txt               one 1 MB line holding the pattern
 *   proj/n\xffme.txt           a non-UTF-8 name holding a non-UTF-8 line
 */

const NEEDLE = 'NEEDLE';
const SECRETS = ['SECRET-DIR-BYTES', 'SECRET-GLOB-BYTES', 'SECRET-OUTSIDE-BYTES'];
const NON_UTF8_NAME = Buffer.from('n\xffme.txt', 'latin1');

let base: string;
let proj: string;
let outside: string;
let sandbox: Record<string, unknown>;

beforeAll(() => {
  ensureBuilt();
  base = mkdtempSync('/tmp/fs-sandbox-search-');
  proj = join(base, 'proj');
  outside = join(base, 'outside');
  const write = (path: string, content: string | Buffer) => {
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, content);
  };
  write(join(proj, 'a.txt'), `one\n${NEEDLE} first\ntwo\nthree\n${NEEDLE} second\n${NEEDLE} third\nfour\n`);
  write(join(proj, '.gitignore'), 'ignored.txt\nbuild/\n');
  write(join(proj, 'ignored.txt'), `${NEEDLE} ignored\n`);
  write(join(proj, 'build', 'out.txt'), `${NEEDLE} built\n`);
  write(join(proj, 'sub', '.ignore'), 'local.txt\n');
  write(join(proj, 'sub', 'local.txt'), `${NEEDLE} nested-ignored\n`);
  write(join(proj, 'sub', 'keep.txt'), `${NEEDLE} kept\nneedle lower\n`);
  write(join(proj, '.hidden', 'h.txt'), `${NEEDLE} hidden\n`);
  write(join(proj, '.dot'), `${NEEDLE} dotfile\n`);
  write(join(proj, 'secret', 's.txt'), `${NEEDLE} ${SECRETS[0]}\n`);
  write(join(proj, 'keys', 'k.pem'), `${NEEDLE} ${SECRETS[1]}\n`);
  write(join(outside, 'o.txt'), `${NEEDLE} ${SECRETS[2]}\n`);
  symlinkSync(outside, join(proj, 'link-out'));
  symlinkSync(join(outside, 'o.txt'), join(proj, 'file-link.txt'));
  write(join(proj, 'bin.dat'), Buffer.from(`${NEEDLE}\0\x01\x02 binary\n`, 'latin1'));
  write(join(proj, 'big.txt'), `${'x'.repeat(512 * 1024)}${NEEDLE}${'y'.repeat(512 * 1024)}\n`);
  writeFileSync(
    Buffer.concat([Buffer.from(`${proj}/`), NON_UTF8_NAME]),
    Buffer.from(`${NEEDLE} caf\xe9\n`, 'latin1'),
  );
  // Distinct modification times, so newest-first order is checkable.
  utimesSync(join(proj, 'sub', 'keep.txt'), 2_000_000_000, 2_000_000_000);
  utimesSync(join(proj, 'a.txt'), 1_000_000_000, 1_000_000_000);
  const entry = (path: string, access: string) => ({
    path: { type: 'path', path: `file://${path}` },
    access,
  });
  sandbox = {
    permissions: {
      type: 'managed',
      file_system: {
        type: 'restricted',
        entries: [
          entry(proj, 'write'),
          entry(join(proj, 'secret'), 'deny'),
          { path: { type: 'glob_pattern', pattern: `${proj}/keys/*.pem` }, access: 'deny' },
        ],
      },
      network: 'restricted',
    },
    cwd: `file://${proj}`,
    windowsSandboxLevel: 'disabled',
  };
});

afterAll(() => {
  rmSync(base, { recursive: true, force: true });
});

const ENV = { PATH: personPath() };
const uri = (path: string) => `file://${path}`;

async function call(method: string, params: Record<string, unknown>) {
  const reply = await callMethod(method, { sandbox, ...params }, { user: 'root', env: ENV });
  for (const secret of SECRETS) {
    expect(reply.run.stdout + reply.run.stderr).not.toContain(secret);
  }
  return reply;
}

/** ripgrep's own flags for the host run: the same fixed ones the helper passes. */
const HOST_FIXED = [...RIPGREP_FIXED_ARGS, '--threads', String(RIPGREP_THREADS)];

function hostRg(args: string[]): Buffer {
  try {
    return execFileSync(rgPath, [...HOST_FIXED, ...args], { env: {}, maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    // Exit 1: nothing matched.
    const out = (error as { stdout?: Buffer }).stdout;
    if (out !== undefined) return out;
    throw error;
  }
}

function pathUriOf(value: { text?: string; bytes?: string }): string {
  const native = value.text ?? decodePathBytes(Buffer.from(value.bytes as string, 'base64'));
  return nativeToPathUri(native, 'linux');
}

/** `path:line` of every match ripgrep reports run directly with `args`. */
function hostMatches(args: string[]): string[] {
  const found: string[] = [];
  for (const line of hostRg(['--json', ...args, '-e', NEEDLE, '--', proj])
    .toString('utf8')
    .split('\n')) {
    if (line === '') continue;
    const event = JSON.parse(line);
    if (event.type === 'match') found.push(`${pathUriOf(event.data.path)}:${event.data.line_number}`);
  }
  return found.sort();
}

function hostFiles(args: string[]): string[] {
  const out = hostRg(['--files', '--null', ...args, '--', proj]);
  return out
    .toString('latin1')
    .split('\0')
    .filter((name) => name !== '')
    .map((name) => nativeToPathUri(decodePathBytes(Buffer.from(name, 'latin1')), 'linux'))
    .sort();
}

/** What the sandbox must hide: the denied directory and the deny-glob matches (the outside is never followed). */
const denied = (key: string) => key.startsWith(uri(`${proj}/secret/`)) || /\.pem(:|$)/.test(key);

type Match = { path: string; lineNumber: number; line: string; lineTruncated?: true; nonUtf8Line?: true };

function keys(matches: Match[]): string[] {
  return matches.map((match) => `${match.path}:${match.lineNumber}`);
}

describe('fs/search under bwrap equals ripgrep on the host minus what the policy denies', () => {
  it.each([
    ['defaults (ignore files honoured, hidden skipped)', {}, []],
    [
      'includeHidden and includeIgnored',
      { includeHidden: true, includeIgnored: true },
      ['--hidden', '--no-ignore'],
    ],
    [
      'case-insensitive fixed string, one glob',
      { fixedStrings: true, caseSensitive: false, include: ['*.txt'] },
      ['--ignore-case', '--fixed-strings', '-g', '*.txt'],
    ],
  ] as Array<[string, Record<string, unknown>, string[]]>)('%s', async (_name, options, rgArgs) => {
    const host = hostMatches(rgArgs);
    // The fixture is meaningful: the host sees what the sandbox must not.
    if (rgArgs.includes('--hidden')) expect(host.some(denied)).toBe(true);
    const reply = await call('fs/search', {
      path: uri(proj),
      pattern: NEEDLE,
      maxResults: 10_000,
      ...options,
    });
    expect(reply.error).toBeUndefined();
    const result = reply.result as { matches: Match[]; truncated: boolean };
    expect(result.truncated).toBe(false);
    expect(keys(result.matches).sort()).toEqual(host.filter((key) => !denied(key)));
    // Deterministic order: path, then line.
    expect(keys(result.matches)).toEqual(
      [...result.matches]
        .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.lineNumber - b.lineNumber))
        .map((m) => `${m.path}:${m.lineNumber}`),
    );
  });

  it('skips the binary file, cuts the 1 MB line at 500 characters, keeps the non-UTF-8 name and line byte-exact', async () => {
    const result = (await call('fs/search', { path: uri(proj), pattern: NEEDLE })).result as {
      matches: Match[];
    };
    expect(result.matches.some((match) => match.path.endsWith('/bin.dat'))).toBe(false);
    const big = result.matches.find((match) => match.path.endsWith('/big.txt'));
    expect(big).toMatchObject({ lineTruncated: true });
    expect(big?.line).toBe('x'.repeat(500));
    const odd = result.matches.find((match) => match.path === uri(`${proj}/n%FFme.txt`));
    expect(odd).toMatchObject({ line: `${NEEDLE} caf%E9`, nonUtf8Line: true });
  });

  it('gives context lines and submatch offsets', async () => {
    const result = (
      await call('fs/search', { path: uri(`${proj}/a.txt`), pattern: 'NEE+DLE', contextLines: 1 })
    ).result as { matches: Array<Match & { submatches: unknown; before: unknown; after: unknown }> };
    expect(result.matches.map((m) => [m.lineNumber, m.before, m.after, m.submatches])).toEqual([
      [2, [{ lineNumber: 1, line: 'one' }], [{ lineNumber: 3, line: 'two' }], [{ start: 0, end: 6 }]],
      [
        5,
        [{ lineNumber: 4, line: 'three' }],
        [{ lineNumber: 6, line: `${NEEDLE} third` }],
        [{ start: 0, end: 6 }],
      ],
      [
        6,
        [{ lineNumber: 5, line: `${NEEDLE} second` }],
        [{ lineNumber: 7, line: 'four' }],
        [{ start: 0, end: 6 }],
      ],
    ]);
  });

  it('filesOnly lists the files ripgrep -l lists, minus the denied ones', async () => {
    const host = [...new Set(hostMatches(['--hidden']).map((key) => key.replace(/:\d+$/, '')))].sort();
    const result = (
      await call('fs/search', { path: uri(proj), pattern: NEEDLE, filesOnly: true, includeHidden: true })
    ).result as { matches: Match[]; files: string[] };
    expect(result.matches).toEqual([]);
    expect(result.files).toEqual(host.filter((path) => !denied(path)));
  });

  it('reports truncated when maxResults cuts the result', async () => {
    const result = (await call('fs/search', { path: uri(proj), pattern: NEEDLE, maxResults: 2 })).result as {
      matches: Match[];
      truncated: boolean;
    };
    expect(result.matches).toHaveLength(2);
    expect(result.truncated).toBe(true);
  });

  it('refuses a bad regex and a bad glob as invalid_params with ripgrep’s words', async () => {
    const regex = await call('fs/search', { path: uri(proj), pattern: 'a(' });
    expect(regex.error?.data.errorKind).toBe('invalid_params');
    expect(regex.error?.message).toMatch(/regex parse error.*unclosed group/);
    const glob = await call('fs/glob', { path: uri(proj), patterns: ['a{'] });
    expect(glob.error?.data.errorKind).toBe('invalid_params');
    expect(glob.error?.message).toMatch(/error parsing glob/);
  });

  it('searching a denied directory or outside the readable roots fails as a read there does', async () => {
    for (const [path, file] of [
      [join(proj, 'secret'), join(proj, 'secret', 's.txt')],
      [outside, join(outside, 'o.txt')],
    ] as const) {
      const search = await call('fs/search', { path: uri(path), pattern: NEEDLE });
      const read = await call('fs/readDirectory', { path: uri(path) });
      const readFile = await call('fs/readFile', { path: uri(file) });
      expect(search.error?.data.errorKind).toBe(read.error?.data.errorKind);
      expect(search.error?.data.errorKind).toBe(readFile.error?.data.errorKind);
      expect(search.error?.message.replace('fs/search', '')).toBe(
        read.error?.message.replace('fs/readDirectory', ''),
      );
    }
  });
});

describe('fs/glob under bwrap', () => {
  it('lists what ripgrep --files lists minus the denied entries, newest first', async () => {
    const host = hostFiles(['--hidden', '-g', '**/*.txt', '-g', '*.pem']);
    expect(host.some(denied)).toBe(true);
    const reply = await call('fs/glob', {
      path: uri(proj),
      patterns: ['**/*.txt', '*.pem'],
      includeHidden: true,
    });
    const result = reply.result as {
      entries: Array<{ path: string; modifiedAtMs: number; kind: string }>;
      truncated: boolean;
    };
    expect(result.truncated).toBe(false);
    expect(result.entries.map((entry) => entry.path).sort(), JSON.stringify(host)).toEqual(
      host.filter((path) => !denied(path)),
    );
    expect(result.entries[0]?.path).toBe(uri(`${proj}/sub/keep.txt`));
    expect(result.entries[result.entries.length - 1]?.path).toBe(uri(`${proj}/a.txt`));
    const times = result.entries.map((entry) => entry.modifiedAtMs);
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });

  it('reports truncated when maxResults cuts the listing', async () => {
    const result = (await call('fs/glob', { path: uri(proj), patterns: ['**'], maxResults: 1 })).result as {
      entries: unknown[];
      truncated: boolean;
    };
    expect(result.entries).toHaveLength(1);
    expect(result.truncated).toBe(true);
  });
});

describe('fs-sandbox grep and glob', () => {
  it('grep prints what rg --no-heading prints, minus the denied files, sandboxed', async () => {
    const cli = await runCli(
      ['grep', '--sandbox', JSON.stringify(sandbox), NEEDLE, '--hidden', '--max', '10000'],
      {
        user: 'root',
        env: ENV,
        cwd: proj,
      },
    );
    expect(cli.code).toBe(0);
    for (const secret of SECRETS) expect(cli.stdout + cli.stderr).not.toContain(secret);
    const host = execFileSync(
      rgPath,
      [
        ...HOST_FIXED,
        '--no-heading',
        '--with-filename',
        '--line-number',
        '--hidden',
        '--color',
        'never',
        NEEDLE,
        './',
      ],
      { cwd: proj, env: {}, maxBuffer: 64 * 1024 * 1024 },
    )
      .toString('utf8')
      .split('\n')
      .map((line) => line.replace(/^\.\//, ''))
      .filter((line) => line !== '' && !line.startsWith('secret/') && !line.includes('.pem:'))
      .map((line) => line.replace(/^(big\.txt:1:).*/, '$1'))
      .filter((line) => !line.startsWith('n'));
    const lines = cli.stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => line.replace(/^(big\.txt:1:).*/, '$1'))
      .filter((line) => !line.startsWith('n'));
    expect(lines.sort()).toEqual(host.sort());
  });

  // A glob naming a file wins over the ignore files, as in ripgrep: sub/local.txt is listed.
  it('glob prints relative paths newest first; the last operand without glob characters is the directory', async () => {
    const cli = await runCli(['glob', '--sandbox', JSON.stringify(sandbox), '*.txt', 'sub'], {
      user: 'root',
      env: ENV,
      cwd: proj,
    });
    expect(cli.code).toBe(0);
    expect(cli.stdout).toBe('sub/keep.txt\nsub/local.txt\n');
  });
});

describe('fs-sandbox serve', () => {
  it('answers fs/search and fs/glob on the wire, with the same results as the CLI and no denied byte', async () => {
    const rpc = (id: number, method: string, params: unknown) =>
      JSON.stringify({ jsonrpc: '2.0', id, method, params });
    const input = [
      rpc(1, 'initialize', { clientName: 'search-test' }),
      JSON.stringify({ jsonrpc: '2.0', method: 'initialized' }),
      rpc(2, 'fs/search', {
        path: uri(proj),
        pattern: NEEDLE,
        includeHidden: true,
        maxResults: 10_000,
        sandbox,
      }),
      rpc(3, 'fs/glob', { path: uri(proj), patterns: ['**'], includeHidden: true, sandbox }),
      '',
    ].join('\n');
    const served = await runCli(['serve'], { user: 'root', env: ENV, input, timeoutMs: 60_000 });
    for (const secret of SECRETS) expect(served.stdout + served.stderr).not.toContain(secret);
    const replies = new Map(
      served.stdout
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line))
        .map((reply) => [reply.id, reply]),
    );
    const search = replies.get(2)?.result as { matches: Match[] };
    const direct = (
      await call('fs/search', { path: uri(proj), pattern: NEEDLE, includeHidden: true, maxResults: 10_000 })
    ).result as { matches: Match[] };
    expect(keys(search.matches)).toEqual(keys(direct.matches));
    const glob = replies.get(3)?.result as { entries: Array<{ path: string }> };
    expect(glob.entries.length).toBeGreaterThan(5);
    expect(glob.entries.some((entry) => denied(entry.path))).toBe(false);
  });
});
