import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFixture, type Fixture } from './fixtures/conformance/fixture-tree.js';
import { ensureBuilt, ServeProcess, type WireReply } from './fixtures/conformance/serve-process.js';

/**
 * Replays the request/response pairs of the reference capture (shared/reference/
 * exec-server-protocol.md §1–§6) against the real `fs-sandbox serve --listen stdio` on an
 * equivalent fixture, with real bwrap for the sandboxed rows. Each row keeps the reference's reply
 * verbatim (`<F>` stands for the fixture root). Where we answer differently on purpose, `ours`
 * says what we answer and why; those rows are the documented differences.
 */

type Expected =
  | { result: unknown; compare?: 'exact' | 'unordered-entries' | 'metadata' }
  | { error: { code: number; message: string } };

interface Row {
  section: string;
  what: string;
  method: string;
  params: (f: Fixture) => unknown;
  reference: Expected;
  /**
   * How closely our reply must match the reference when `ours` is absent: `exact` (result or
   * message equal), `prefix` (message starts the same), `code` (same code; the OS wording differs:
   * we name the path instead of "(os error N)").
   */
  match?: 'exact' | 'prefix' | 'code';
  ours?: { why: string } & ({ result: unknown } | { error: { code: number; errorKind: string } });
  after?: (f: Fixture) => void;
}

const HELLO = 'aGVsbG8gc2FuZGJveAo=';
const SECRET = 'dG9wIHNlY3JldAo=';
const ENOENT = { code: -32004, message: 'No such file or directory (os error 2)' };
const EROFS = { code: -32603, message: 'Read-only file system (os error 30)' };
const PRECHECK_WHY =
  'the broker checks the policy before spawning and names the rule (permission_denied) instead of letting the kernel answer with an errno';

const read =
  (path: string, sandbox: (f: Fixture) => unknown = () => null) =>
  (f: Fixture) => ({
    path: f.uri(path),
    sandbox: sandbox(f),
  });
const write =
  (path: string, sandbox: (f: Fixture) => unknown = () => null, dataBase64 = 'bmV3IGZpbGUK') =>
  (f: Fixture) => ({
    path: f.uri(path),
    dataBase64,
    sandbox: sandbox(f),
  });
const RO = (f: Fixture) => f.contexts.readOnly;
const WW = (f: Fixture) => f.contexts.workspaceWrite;

const ROWS: Row[] = [
  // §1 framing
  {
    section: '§1',
    what: 'unknown method',
    method: 'fs/frobnicate',
    params: () => ({}),
    reference: {
      error: { code: -32601, message: 'exec-server stub does not implement `fs/frobnicate` yet' },
    },
    ours: {
      why: 'same code; the message names our program',
      error: { code: -32601, errorKind: 'invalid_request' },
    },
  },
  ...['fs/readStream', 'fs/watch', 'fs/unwatch', 'fs/move', 'fs/symlink', 'fs/readLink', 'fs/stat'].map(
    (method): Row => ({
      section: '§4',
      what: `${method} is not implemented`,
      method,
      params: () => ({}),
      reference: {
        error: { code: -32601, message: `exec-server stub does not implement \`${method}\` yet` },
      },
      ours: {
        why: 'same code; the message names our program',
        error: { code: -32601, errorKind: 'invalid_request' },
      },
    }),
  ),
  {
    section: '§4',
    what: 'fs/rename is implemented here',
    method: 'fs/rename',
    params: () => ({}),
    reference: {
      error: { code: -32601, message: 'exec-server stub does not implement `fs/rename` yet' },
    },
    ours: {
      why: 'fs/rename is one of our methods (README "fs/rename"), so empty params name the missing field',
      error: { code: -32602, errorKind: 'invalid_params' },
    },
  },
  {
    section: '§4',
    what: 'fs/writeBlock (write streaming)',
    method: 'fs/writeBlock',
    params: () => ({ handleId: 'h', offset: 0, chunk: 'eA==' }),
    reference: { error: { code: -32004, message: 'unknown file handle `h`' } },
  },

  // §3 paths are file URIs
  {
    section: '§3',
    what: 'relative path',
    method: 'fs/readFile',
    params: () => ({ path: 'ro/hello.txt', sandbox: null }),
    reference: { error: { code: -32602, message: 'invalid URI: relative URL without a base' } },
  },
  {
    section: '§3',
    what: 'native absolute path',
    method: 'fs/readFile',
    params: (f) => ({ path: f.native('ro/hello.txt'), sandbox: null }),
    reference: { error: { code: -32602, message: 'invalid URI: relative URL without a base' } },
  },
  {
    section: '§3',
    what: 'http URI',
    method: 'fs/readFile',
    params: () => ({ path: 'http://example.com/x', sandbox: null }),
    reference: { error: { code: -32602, message: 'unsupported path URI scheme `http`' } },
  },

  // §4.1 happy paths without a sandbox
  {
    section: '§4.1',
    what: 'readFile',
    method: 'fs/readFile',
    params: read('ro/hello.txt'),
    reference: { result: { dataBase64: HELLO } },
  },
  {
    section: '§4.1',
    what: 'writeFile',
    method: 'fs/writeFile',
    params: write('rw/new.txt'),
    reference: { result: {} },
    after: (f) => expect(readFileSync(f.native('rw/new.txt'), 'utf8')).toBe('new file\n'),
  },
  {
    section: '§4.1',
    what: 'readDirectory (readdir order, so compared as a set)',
    method: 'fs/readDirectory',
    params: read('ro'),
    reference: {
      compare: 'unordered-entries',
      result: {
        entries: [
          { fileName: 'digits.txt', isDirectory: false, isFile: true },
          { fileName: 'link-out', isDirectory: false, isFile: true },
          { fileName: 'link-in', isDirectory: false, isFile: true },
          { fileName: 'hello.txt', isDirectory: false, isFile: true },
          { fileName: 'sub', isDirectory: true, isFile: false },
        ],
      },
    },
  },
  {
    section: '§4.1',
    what: 'getMetadata of a file',
    method: 'fs/getMetadata',
    params: read('ro/hello.txt'),
    reference: {
      compare: 'metadata',
      result: {
        isDirectory: false,
        isFile: true,
        isSymlink: false,
        size: 14,
        createdAtMs: 0,
        modifiedAtMs: 1796003325593,
      },
    },
  },
  {
    section: '§4.1',
    what: 'getMetadata of a symlink (follows it, isSymlink describes the link)',
    method: 'fs/getMetadata',
    params: read('ro/link-in'),
    reference: {
      compare: 'metadata',
      result: {
        isDirectory: false,
        isFile: true,
        isSymlink: true,
        size: 14,
        createdAtMs: 0,
        modifiedAtMs: 1796003325593,
      },
    },
  },
  {
    section: '§4.1',
    what: 'createDirectory recursive',
    method: 'fs/createDirectory',
    params: (f) => ({ path: f.uri('rw/a/b/c'), recursive: true, sandbox: null }),
    reference: { result: {} },
    after: (f) => expect(existsSync(f.native('rw/a/b/c'))).toBe(true),
  },
  {
    section: '§4.1',
    what: 'copy a file',
    method: 'fs/copy',
    params: (f) => ({
      sourcePath: f.uri('ro/hello.txt'),
      destinationPath: f.uri('rw/hello-copy.txt'),
      recursive: false,
      sandbox: null,
    }),
    reference: { result: {} },
    after: (f) => expect(readFileSync(f.native('rw/hello-copy.txt'), 'utf8')).toBe('hello sandbox\n'),
  },
  {
    section: '§4.1',
    what: 'canonicalize resolves symlinks',
    method: 'fs/canonicalize',
    params: read('ro/link-in'),
    reference: { result: { path: '<F>/ro/hello.txt' } },
  },
  {
    section: '§4.1',
    what: 'remove recursive',
    method: 'fs/remove',
    params: (f) => ({ path: f.uri('rw/a'), recursive: true, force: false, sandbox: null }),
    reference: { result: {} },
    after: (f) => expect(existsSync(f.native('rw/a'))).toBe(false),
  },
  {
    section: '§4.1',
    what: 'remove a missing path with force',
    method: 'fs/remove',
    params: (f) => ({ path: f.uri('rw/ghost'), recursive: false, force: true, sandbox: null }),
    reference: { result: {} },
  },

  // §4.2 streaming reads
  {
    section: '§4.2',
    what: 'open',
    method: 'fs/open',
    params: (f) => ({ handleId: 'h-1', path: f.uri('ro/digits.txt'), sandbox: null }),
    reference: { result: { handleId: 'h-1' } },
  },
  ...(
    [
      [6, 3, { chunk: 'Njc4', eof: false }],
      [8, 4, { chunk: 'ODk=', eof: true }],
      [7, 3, { chunk: 'Nzg5', eof: false }],
      [10, 3, { chunk: '', eof: true }],
    ] as const
  ).map(
    ([offset, len, result]): Row => ({
      section: '§4.2',
      what: `readBlock offset ${offset} len ${len} (eof only on a short read)`,
      method: 'fs/readBlock',
      params: () => ({ handleId: 'h-1', offset, len }),
      reference: { result },
    }),
  ),
  ...[1_048_577, 1_099_511_627_776, 0].map(
    (len): Row => ({
      section: '§5',
      what: `readBlock len ${len}`,
      method: 'fs/readBlock',
      params: () => ({ handleId: 'h-1', offset: 0, len }),
      reference: { error: { code: -32600, message: 'file read block length must be between 1 and 1048576' } },
    }),
  ),
  {
    section: '§5',
    what: 'readBlock negative len',
    method: 'fs/readBlock',
    params: () => ({ handleId: 'h-1', offset: 0, len: -1 }),
    reference: { error: { code: -32602, message: 'invalid number' } },
  },
  {
    section: '§4.2',
    what: 'duplicate handle id',
    method: 'fs/open',
    params: (f) => ({ handleId: 'h-1', path: f.uri('ro/hello.txt'), sandbox: null }),
    reference: { error: { code: -32600, message: 'file handle `h-1` already exists' } },
  },
  {
    section: '§4.2',
    what: 'open a directory',
    method: 'fs/open',
    params: (f) => ({ handleId: 'dir', path: f.uri('ro/sub'), sandbox: null }),
    reference: { error: { code: -32600, message: 'path `<F>/ro/sub` is not a file' } },
    match: 'prefix',
  },
  {
    section: '§4.2',
    what: 'open with an unknown mode',
    method: 'fs/open',
    params: (f) => ({ handleId: 'm', path: f.uri('ro/hello.txt'), mode: 'append', sandbox: null }),
    reference: { error: { code: -32602, message: 'unknown variant `append`, expected `read` or `replace`' } },
  },
  {
    section: '§4.2',
    what: 'open for write streaming (mode replace)',
    method: 'fs/open',
    params: (f) => ({ handleId: 'w', path: f.uri('rw/stream.txt'), mode: 'replace', sandbox: null }),
    reference: { result: { handleId: 'w' } },
    // The reference creates (or truncates) the file at open; ours appears whole on fs/close.
    after: (f) => expect(existsSync(f.native('rw/stream.txt'))).toBe(false),
  },
  {
    section: '§4.2',
    what: 'write a block to the write handle',
    method: 'fs/writeBlock',
    params: () => ({ handleId: 'w', offset: 0, chunk: HELLO }),
    reference: { result: {} },
  },
  {
    section: '§4.2',
    what: 'readBlock on a write handle',
    method: 'fs/readBlock',
    params: () => ({ handleId: 'w', offset: 0, len: 4 }),
    reference: { error: { code: -32603, message: 'Bad file descriptor (os error 9)' } },
  },
  {
    section: '§4.2',
    what: 'close the write handle',
    method: 'fs/close',
    params: () => ({ handleId: 'w' }),
    reference: { result: {} },
    after: (f) => expect(readFileSync(f.native('rw/stream.txt'), 'utf8')).toBe('hello sandbox\n'),
  },
  {
    section: '§4.2',
    what: 'writeBlock on a read handle',
    method: 'fs/writeBlock',
    params: () => ({ handleId: 'h-1', offset: 0, chunk: HELLO }),
    reference: { error: { code: -32603, message: 'Bad file descriptor (os error 9)' } },
  },
  {
    section: '§4.2',
    what: 'close',
    method: 'fs/close',
    params: () => ({ handleId: 'h-1' }),
    reference: { result: {} },
  },
  {
    section: '§5',
    what: 'readBlock after close',
    method: 'fs/readBlock',
    params: () => ({ handleId: 'h-1', offset: 0, len: 4 }),
    reference: { error: { code: -32004, message: 'unknown file handle `h-1`' } },
  },
  {
    section: '§5',
    what: 'readBlock of an unknown handle',
    method: 'fs/readBlock',
    params: () => ({ handleId: 'no-such-handle', offset: 0, len: 4 }),
    reference: { error: { code: -32004, message: 'unknown file handle `no-such-handle`' } },
  },
  {
    section: '§5',
    what: 'close of an unknown handle succeeds',
    method: 'fs/close',
    params: () => ({ handleId: 'no-such-handle' }),
    reference: { result: {} },
  },
  {
    section: '§6.3',
    what: 'sandboxed open (sandboxedFileStreaming)',
    method: 'fs/open',
    params: (f) => ({ handleId: 'sb', path: f.uri('ro/digits.txt'), sandbox: f.contexts.readOnly }),
    reference: { result: { handleId: 'sb' } },
  },
  {
    section: '§6.3',
    what: 'sandboxed readBlock',
    method: 'fs/readBlock',
    params: () => ({ handleId: 'sb', offset: 6, len: 3 }),
    reference: { result: { chunk: 'Njc4', eof: false } },
  },
  {
    section: '§6.3',
    what: 'sandboxed open outside the readable roots',
    method: 'fs/open',
    params: (f) => ({ handleId: 'sb-out', path: f.uri('outside/secret.txt'), sandbox: f.contexts.readOnly }),
    reference: { error: ENOENT },
    ours: { why: PRECHECK_WHY, error: { code: -32600, errorKind: 'permission_denied' } },
  },

  // §5 required error cases
  {
    section: '§5',
    what: 'missing file',
    method: 'fs/readFile',
    params: read('ro/nope.txt'),
    reference: { error: ENOENT },
    match: 'code',
  },
  {
    section: '§5',
    what: 'invalid base64 in writeFile',
    method: 'fs/writeFile',
    params: write('rw/bad.txt', () => null, '%%%not-base64'),
    reference: {
      error: {
        code: -32600,
        message: 'fs/writeFile requires valid base64 dataBase64: Invalid symbol 37, offset 0.',
      },
    },
  },
  {
    section: '§5',
    what: 'invalid base64 in a sandboxed writeFile (rejected before any helper)',
    method: 'fs/writeFile',
    params: write('rw/bad.txt', WW, '%%%not-base64'),
    reference: {
      error: {
        code: -32600,
        message: 'fs/writeFile requires valid base64 dataBase64: Invalid symbol 37, offset 0.',
      },
    },
  },
  {
    section: '§5',
    what: 'directory read as a file',
    method: 'fs/readFile',
    params: read('ro/sub'),
    reference: { error: { code: -32600, message: 'path `<F>/ro/sub` is not a file' } },
    match: 'prefix',
  },
  {
    section: '§5',
    what: 'directory read as a file, sandboxed',
    method: 'fs/readFile',
    params: read('ro/sub', RO),
    reference: { error: { code: -32600, message: 'path `<F>/ro/sub` is not a file' } },
    match: 'prefix',
  },
  {
    section: '§5',
    what: 'write into a read-only sandbox',
    method: 'fs/writeFile',
    params: write('ro/new.txt', RO),
    reference: { error: EROFS },
    ours: { why: PRECHECK_WHY, error: { code: -32600, errorKind: 'permission_denied' } },
    after: (f) => expect(existsSync(f.native('ro/new.txt'))).toBe(false),
  },
  {
    section: '§5',
    what: 'write outside the writable roots (workspace-write)',
    method: 'fs/writeFile',
    params: write('outside/evil.txt', WW),
    reference: { error: ENOENT },
    ours: { why: PRECHECK_WHY, error: { code: -32600, errorKind: 'permission_denied' } },
    after: (f) => expect(existsSync(f.native('outside/evil.txt'))).toBe(false),
  },
  {
    section: '§5',
    what: 'write outside the writable roots (root:read + rw:write)',
    method: 'fs/writeFile',
    params: write('outside/evil.txt', (f) => f.contexts.rootReadRwWrite),
    reference: { error: EROFS },
    ours: { why: PRECHECK_WHY, error: { code: -32600, errorKind: 'permission_denied' } },
    after: (f) => expect(existsSync(f.native('outside/evil.txt'))).toBe(false),
  },
  {
    section: '§5',
    what: 'symlink pointing outside, sandboxed read',
    method: 'fs/readFile',
    params: read('ro/link-out', RO),
    reference: { error: ENOENT },
    match: 'code',
  },
  {
    section: '§5',
    what: 'symlink pointing outside, unsandboxed read succeeds',
    method: 'fs/readFile',
    params: read('ro/link-out'),
    reference: { result: { dataBase64: SECRET } },
  },
  {
    section: '§5',
    what: 'write through a directory symlink pointing outside',
    method: 'fs/writeFile',
    params: write('rw/dirlink-out/evil2.txt', WW),
    reference: { error: ENOENT },
    ours: {
      why: `${PRECHECK_WHY}; the pre-check resolves the link physically and names where the write would land`,
      error: { code: -32600, errorKind: 'permission_denied' },
    },
    after: (f) => expect(existsSync(f.native('outside/evil2.txt'))).toBe(false),
  },
  {
    section: '§5',
    what: 'readDirectory on a file',
    method: 'fs/readDirectory',
    params: read('ro/hello.txt'),
    reference: { error: { code: -32603, message: 'Not a directory (os error 20)' } },
    ours: {
      why: 'not_directory is a request error in the error-kind table (error-kinds.ts), so it maps to -32600',
      error: { code: -32600, errorKind: 'not_directory' },
    },
  },
  {
    section: '§5',
    what: 'remove a non-empty directory without recursive',
    method: 'fs/remove',
    params: (f) => ({ path: f.uri('rw/.git'), recursive: false, force: false, sandbox: null }),
    reference: { error: { code: -32603, message: 'Directory not empty (os error 39)' } },
    ours: {
      why: 'the helper refuses before touching the directory and says recursive is needed (a request error)',
      error: { code: -32600, errorKind: 'is_directory' },
    },
    after: (f) => expect(existsSync(f.native('rw/.git/HEAD'))).toBe(true),
  },
  {
    section: '§5',
    what: 'remove a missing path without force',
    method: 'fs/remove',
    params: (f) => ({ path: f.uri('rw/ghost'), recursive: false, force: false, sandbox: null }),
    reference: { error: ENOENT },
    match: 'code',
  },
  {
    section: '§5',
    what: 'canonicalize a missing path',
    method: 'fs/canonicalize',
    params: read('rw/ghost'),
    reference: { error: ENOENT },
    match: 'code',
  },
  {
    section: '§5',
    what: 'createDirectory with a missing parent, not recursive',
    method: 'fs/createDirectory',
    params: (f) => ({ path: f.uri('rw/no/such'), recursive: false, sandbox: null }),
    reference: { error: ENOENT },
    match: 'code',
  },
  {
    section: '§5',
    what: 'copy a directory without recursive',
    method: 'fs/copy',
    params: (f) => ({
      sourcePath: f.uri('ro/sub'),
      destinationPath: f.uri('rw/sub-copy'),
      recursive: false,
      sandbox: null,
    }),
    reference: {
      error: { code: -32600, message: 'fs/copy requires recursive: true when sourcePath is a directory' },
    },
  },
  {
    section: '§5',
    what: 'writeFile without dataBase64',
    method: 'fs/writeFile',
    params: (f) => ({ path: f.uri('rw/x.txt'), sandbox: null }),
    reference: { error: { code: -32602, message: 'missing field `dataBase64`' } },
  },
  {
    section: '§5',
    what: 'walk beyond its limits',
    method: 'fs/walk',
    params: (f) => ({
      path: f.uri('.'),
      options: { maxDepth: 65, maxDirectories: 10, maxEntries: 10, followDirectorySymlinks: false },
      sandbox: null,
    }),
    reference: {
      error: {
        code: -32600,
        message: 'filesystem walk limits exceed maximums: depth=64, directories=10000, entries=50000',
      },
    },
  },

  // §6.3 / §6.4 sandboxed behaviour
  {
    section: '§6.3',
    what: 'sandboxed readFile',
    method: 'fs/readFile',
    params: read('ro/hello.txt', RO),
    reference: { result: { dataBase64: HELLO } },
  },
  {
    section: '§6.4',
    what: 'read outside the readable roots',
    method: 'fs/readFile',
    params: read('outside/secret.txt', RO),
    reference: { error: ENOENT },
    ours: { why: PRECHECK_WHY, error: { code: -32600, errorKind: 'permission_denied' } },
  },
  {
    section: '§6.4',
    what: 'relative symlink that stays inside',
    method: 'fs/readFile',
    params: read('ro/link-in', RO),
    reference: { result: { dataBase64: HELLO } },
  },
  {
    section: '§6.4',
    what: 'readDirectory omits the dangling (outside) link',
    method: 'fs/readDirectory',
    params: read('ro', RO),
    reference: {
      compare: 'unordered-entries',
      result: {
        entries: [
          { fileName: 'digits.txt', isDirectory: false, isFile: true },
          { fileName: 'link-in', isDirectory: false, isFile: true },
          { fileName: 'hello.txt', isDirectory: false, isFile: true },
          { fileName: 'sub', isDirectory: true, isFile: false },
        ],
      },
    },
  },
  {
    section: '§6.4',
    what: 'readFile inside a deny subtree',
    method: 'fs/readFile',
    params: read('ro/sub/x.txt', (f) => f.contexts.denySub),
    reference: { error: { code: -32600, message: 'Permission denied (os error 13)' } },
    ours: { why: `same code; ${PRECHECK_WHY}`, error: { code: -32600, errorKind: 'permission_denied' } },
  },
  {
    section: '§6.4',
    what: 'a glob_pattern read entry grants nothing',
    method: 'fs/readFile',
    params: read('ro/hello.txt', (f) => f.contexts.globRead),
    reference: { error: ENOENT },
    ours: { why: PRECHECK_WHY, error: { code: -32600, errorKind: 'permission_denied' } },
  },
  {
    section: '§6.4',
    what: 'empty restricted entries: nothing is readable',
    method: 'fs/readFile',
    params: read('ro/hello.txt', (f) => f.contexts.empty),
    reference: { error: ENOENT },
    ours: { why: PRECHECK_WHY, error: { code: -32600, errorKind: 'permission_denied' } },
  },
  {
    section: '§6.4',
    what: 'write to rw/.git/HEAD',
    method: 'fs/writeFile',
    params: write('rw/.git/HEAD', WW),
    reference: { error: EROFS },
    ours: {
      why: 'protected metadata names get their own kind, before any spawn',
      error: { code: -32600, errorKind: 'protected_path' },
    },
    after: (f) => expect(readFileSync(f.native('rw/.git/HEAD'), 'utf8')).toBe('ref: refs/heads/main\n'),
  },
  {
    section: '§6.4',
    what: 'create rw/.codex',
    method: 'fs/createDirectory',
    params: (f) => ({ path: f.uri('rw/.codex'), recursive: true, sandbox: f.contexts.workspaceWrite }),
    reference: { error: { code: -32603, message: 'Is a directory (os error 21)' } },
    ours: {
      why: 'protected metadata names get their own kind, before any spawn',
      error: { code: -32600, errorKind: 'protected_path' },
    },
    after: (f) => expect(existsSync(f.native('rw/.codex'))).toBe(false),
  },
  {
    section: '§6.4',
    what: 'write through a dangling symlink to outside',
    method: 'fs/writeFile',
    params: write('rw/dangling-out', WW),
    reference: { error: ENOENT },
    ours: {
      why: 'a sandboxed write never follows a symlink at the written name (symlink_escape)',
      error: { code: -32600, errorKind: 'symlink_escape' },
    },
    after: (f) => expect(existsSync(f.native('outside/missing'))).toBe(false),
  },
  {
    section: '§6.4',
    what: 'createDirectory outside every root',
    method: 'fs/createDirectory',
    params: (f) => ({ path: f.uri('outside/newdir'), recursive: true, sandbox: f.contexts.workspaceWrite }),
    reference: { result: {} },
    ours: {
      why: 'the reference reports a false success (the mkdir lands in the sandbox tmpfs); we refuse with a typed error',
      error: { code: -32600, errorKind: 'permission_denied' },
    },
    after: (f) => expect(existsSync(f.native('outside/newdir'))).toBe(false),
  },
  {
    section: '§6.4',
    what: 'copy rw -> outside',
    method: 'fs/copy',
    params: (f) => ({
      sourcePath: f.uri('rw/new.txt'),
      destinationPath: f.uri('outside/copied.txt'),
      recursive: false,
      sandbox: f.contexts.workspaceWrite,
    }),
    reference: { error: ENOENT },
    ours: { why: PRECHECK_WHY, error: { code: -32600, errorKind: 'permission_denied' } },
    after: (f) => expect(existsSync(f.native('outside/copied.txt'))).toBe(false),
  },
  {
    section: '§6.4',
    what: 'copy ro -> rw',
    method: 'fs/copy',
    params: (f) => ({
      sourcePath: f.uri('ro/digits.txt'),
      destinationPath: f.uri('rw/digits-copy.txt'),
      recursive: false,
      sandbox: f.contexts.workspaceWrite,
    }),
    reference: { result: {} },
    after: (f) => expect(readFileSync(f.native('rw/digits-copy.txt'), 'utf8')).toBe('0123456789'),
  },
  {
    section: '§6.4',
    what: 'remove outside',
    method: 'fs/remove',
    params: (f) => ({
      path: f.uri('outside/secret.txt'),
      recursive: false,
      force: false,
      sandbox: f.contexts.workspaceWrite,
    }),
    reference: { error: ENOENT },
    ours: { why: PRECHECK_WHY, error: { code: -32600, errorKind: 'permission_denied' } },
    after: (f) => expect(existsSync(f.native('outside/secret.txt'))).toBe(true),
  },
  {
    section: '§6.4',
    what: 'remove under a read-only root',
    method: 'fs/remove',
    params: (f) => ({
      path: f.uri('ro/hello.txt'),
      recursive: false,
      force: false,
      sandbox: f.contexts.workspaceWrite,
    }),
    reference: { error: EROFS },
    ours: { why: PRECHECK_WHY, error: { code: -32600, errorKind: 'permission_denied' } },
    after: (f) => expect(existsSync(f.native('ro/hello.txt'))).toBe(true),
  },
  {
    section: '§6.4',
    what: 'project_roots + cwd + workspaceRoots: write inside',
    method: 'fs/writeFile',
    params: write('rw/project.txt', (f) => f.contexts.projectRoots(true)),
    reference: { result: {} },
    after: (f) => expect(readFileSync(f.native('rw/project.txt'), 'utf8')).toBe('new file\n'),
  },
  {
    section: '§6.4',
    what: 'project_roots + cwd + workspaceRoots: write outside',
    method: 'fs/writeFile',
    params: write('outside/project.txt', (f) => f.contexts.projectRoots(true)),
    reference: { error: ENOENT },
    ours: { why: PRECHECK_WHY, error: { code: -32600, errorKind: 'permission_denied' } },
  },
  {
    section: '§6.1',
    what: 'project_roots without cwd',
    method: 'fs/writeFile',
    params: write('rw/project.txt', (f) => f.contexts.projectRoots(false)),
    reference: {
      error: { code: -32602, message: 'file system sandbox context with dynamic permissions requires cwd' },
    },
  },
  {
    section: '§6.4',
    what: 'network enabled: fs behaves the same',
    method: 'fs/readFile',
    params: read('ro/hello.txt', (f) => f.contexts.networkEnabled),
    reference: { result: { dataBase64: HELLO } },
  },
  {
    section: '§6.4',
    what: 'useLegacyLandlock: true',
    method: 'fs/readFile',
    params: read('ro/hello.txt', (f) => f.contexts.legacyLandlock),
    reference: {
      error: {
        code: -32603,
        message: "fs sandbox helper failed with status exit status: 101: thread 'main' … panicked …",
      },
    },
    ours: {
      why: 'the flag selects nothing here (there is one Linux backend, bwrap); the read works instead of panicking',
      result: { dataBase64: HELLO },
    },
  },
];

function withRoot(value: unknown, f: Fixture): unknown {
  const rootUri = f.uri('.').replace(/\/$/, '');
  return JSON.parse(
    JSON.stringify(value)
      .replaceAll('file://<F>', rootUri)
      .replaceAll('"<F>', `"${rootUri}`)
      .replaceAll('`<F>', `\`${f.root}`),
  );
}

function sortEntries(result: unknown): unknown {
  const entries = (result as { entries: Array<{ fileName: string }> }).entries;
  return { entries: [...entries].sort((a, b) => a.fileName.localeCompare(b.fileName)) };
}

function checkResult(reply: WireReply, expected: { result: unknown; compare?: string }, f: Fixture): void {
  expect(reply.error, JSON.stringify(reply.error)).toBeUndefined();
  const want = withRoot(expected.result, f);
  if (expected.compare === 'unordered-entries') {
    expect(sortEntries(reply.result)).toEqual(sortEntries(want));
  } else if (expected.compare === 'metadata') {
    // Times depend on the fixture; the shape and every other value must be the reference's.
    // `permissions`, `accessedAtMs` and `hardLinks` are our extensions (README, differences): checked
    // for shape, not against the reference.
    const { createdAtMs, modifiedAtMs, permissions, accessedAtMs, hardLinks, ...rest } =
      reply.result as Record<string, unknown>;
    expect(permissions).toMatch(/^[0-7]{4}$/);
    expect(typeof accessedAtMs).toBe('number');
    expect(hardLinks).toBe(1);
    const { createdAtMs: _c, modifiedAtMs: _m, ...wantRest } = want as Record<string, unknown>;
    expect(rest).toEqual(wantRest);
    expect(typeof createdAtMs).toBe('number');
    expect(typeof modifiedAtMs).toBe('number');
  } else {
    expect(reply.result).toEqual(want);
  }
}

describe('conformance with the reference exec-server (stdio, real bwrap)', () => {
  let fixture: Fixture;
  let server: ServeProcess;

  beforeAll(async () => {
    ensureBuilt();
    fixture = await buildFixture();
  });

  afterAll(async () => {
    await fixture?.cleanup();
  });

  describe('§2 handshake', () => {
    it('replays the handshake rules on a fresh connection', async () => {
      const served = ServeProcess.start();
      expect(
        await served.request('fs/readFile', { path: fixture.uri('ro/hello.txt'), sandbox: null }, 1),
      ).toEqual({
        error: {
          code: -32600,
          message: 'client must call initialize before using filesystem methods',
          data: { errorKind: 'invalid_request' },
        },
        id: 1,
      });
      expect(await served.request('initialize', {}, 'bad')).toMatchObject({
        error: { code: -32602, message: 'missing field `clientName`' },
      });
      const init = await served.request('initialize', { clientName: 'demo-client' }, 1);
      const result = init.result as { sessionId: string; environmentInfo: Record<string, unknown> };
      expect(Object.keys(init)).toEqual(['id', 'result']);
      expect(result.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      // The reference's environment fields we can state honestly, with the same names and forms.
      expect(result.environmentInfo).toMatchObject({
        executorVersion: expect.any(String),
        cwd: expect.stringMatching(/^file:\/\/\//),
        userHomeDir: expect.stringMatching(/^file:\/\/\//),
        platformOs: 'linux',
        temporaryDirectories: [expect.stringMatching(/^file:\/\/\//)],
        tempDir: expect.stringMatching(/^file:\/\/\//),
        capabilities: { sandboxedFileStreaming: true, fileWriteStreaming: true },
      });
      expect(
        await served.request('fs/readFile', { path: fixture.uri('ro/hello.txt'), sandbox: null }, 2),
      ).toMatchObject({
        error: { code: -32600, message: 'client must send initialized before using filesystem methods' },
      });
      expect(await served.request('initialize', { clientName: 'demo-client' }, 3)).toEqual({
        error: {
          code: -32600,
          message: 'initialize may only be sent once per connection',
          data: { errorKind: 'invalid_request' },
        },
        id: 3,
      });
      served.notify('initialized');
      expect(
        await served.request('fs/readFile', { path: fixture.uri('ro/hello.txt'), sandbox: null }, 4),
      ).toEqual({
        id: 4,
        result: { dataBase64: HELLO },
      });
      expect(await served.stop()).toBe(0);
      expect(served.stderr).toBe('');
    });
  });

  describe('§1 framing', () => {
    it('answers unparsable input with id -1, echoes string ids, accepts requests without "jsonrpc"', async () => {
      const served = ServeProcess.start();
      await served.handshake();
      served.send('{hello');
      const parseError = await served.replyFor(-1);
      expect(parseError.error?.code).toBe(-32600);
      expect(parseError.error?.message).toMatch(/^failed to parse JSON-RPC message from /);
      served.send(
        JSON.stringify({
          id: 'str-id',
          method: 'fs/readFile',
          params: { path: fixture.uri('ro/hello.txt') },
        }),
      );
      expect(await served.replyFor('str-id')).toEqual({ id: 'str-id', result: { dataBase64: HELLO } });
      expect(served.rawLines.every((line) => !line.includes('"jsonrpc"'))).toBe(true);
      expect(await served.stop()).toBe(0);
    });
  });

  describe('rows', () => {
    beforeAll(async () => {
      // One request at a time, like the reference, so the rows run in the capture's order.
      server = ServeProcess.start(['--concurrency', '1']);
      await server.handshake();
    });

    afterAll(async () => {
      expect(await server.stop()).toBe(0);
      expect(server.stderr).toBe('');
    });

    it.each(ROWS.map((row) => [`${row.section} ${row.method}: ${row.what}`, row] as const))(
      '%s',
      async (_name, row) => {
        const reply = await server.request(row.method, row.params(fixture));
        expect(reply.error === undefined || typeof reply.error.data?.errorKind === 'string').toBe(true);
        const expected = row.ours ?? row.reference;
        if ('result' in expected) {
          checkResult(reply, expected as { result: unknown; compare?: string }, fixture);
        } else if (row.ours && 'error' in row.ours) {
          expect(reply.error).toMatchObject({
            code: row.ours.error.code,
            data: { errorKind: row.ours.error.errorKind },
          });
        } else {
          const want = withRoot(expected.error, fixture) as { code: number; message: string };
          expect(reply.error?.code, JSON.stringify(reply.error)).toBe(want.code);
          const match = row.match ?? 'exact';
          if (match === 'exact') expect(reply.error?.message).toBe(want.message);
          if (match === 'prefix') expect(reply.error?.message.startsWith(want.message)).toBe(true);
        }
        row.after?.(fixture);
      },
    );
  });

  it('refuses the 129th read handle on one connection and frees a slot on close (§4.2)', async () => {
    const served = ServeProcess.start();
    await served.handshake();
    const path = fixture.uri('ro/digits.txt');
    for (let i = 0; i < 128; i += 1) {
      expect((await served.request('fs/open', { handleId: `h${i}`, path }, i)).result).toEqual({
        handleId: `h${i}`,
      });
    }
    expect(await served.request('fs/open', { handleId: 'h128', path }, 130)).toMatchObject({
      error: { code: -32600, message: 'at most 128 file handles may be open per connection' },
      id: 130,
    });
    expect((await served.request('fs/close', { handleId: 'h0' })).result).toEqual({});
    expect((await served.request('fs/open', { handleId: 'h128', path })).result).toEqual({
      handleId: 'h128',
    });
    expect(await served.stop()).toBe(0);
  });
});
