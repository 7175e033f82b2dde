import { describe, expect, it } from 'vitest';
import type { Method } from '../src/method-table.js';
import { nativePathOf } from '../src/path-uri.js';
import { parseParams, parseResult, parseSandboxContext } from '../src/schemas/index.js';
import { thrownFsError } from './support/thrown.js';

const failure = thrownFsError;

const restricted = (entries: unknown[]) => ({
  permissions: { type: 'managed', file_system: { type: 'restricted', entries }, network: 'restricted' },
  windowsSandboxLevel: 'disabled',
});

describe('sandbox context schema', () => {
  it("parses the README's example context and canonicalises paths", () => {
    const context = parseSandboxContext({
      permissions: {
        type: 'managed',
        file_system: {
          type: 'restricted',
          entries: [
            { path: { type: 'path', path: 'file://localhost/w' }, access: 'write' },
            { path: { type: 'special', value: { kind: 'minimal' } }, access: 'read' },
            { path: { type: 'path', path: 'file:///w/.env' }, access: 'none' },
          ],
        },
        network: 'restricted',
      },
      cwd: 'file:///w',
      workspaceRoots: ['file:///w'],
      windowsSandboxLevel: 'disabled',
      somethingNew: 1,
    });
    expect(context).toEqual({
      permissions: {
        type: 'managed',
        file_system: {
          type: 'restricted',
          entries: [
            { path: { type: 'path', path: 'file:///w' }, access: 'write' },
            { path: { type: 'special', value: { kind: 'minimal' } }, access: 'read' },
            { path: { type: 'path', path: 'file:///w/.env' }, access: 'deny' },
          ],
        },
        network: 'restricted',
      },
      cwd: 'file:///w',
      workspaceRoots: ['file:///w'],
      windowsSandboxLevel: 'disabled',
    });
  });
  it('keeps unknown special kinds as unknown', () => {
    const context = parseSandboxContext(
      restricted([{ path: { type: 'special', value: { kind: 'home', extra: 1 } }, access: 'write' }]),
    );
    const fs = context?.permissions.type === 'managed' ? context.permissions.file_system : null;
    expect(fs?.type === 'restricted' && fs.entries[0]?.path).toEqual({
      type: 'special',
      value: { kind: 'unknown', raw: { kind: 'home', extra: 1 } },
    });
  });
  it('maps the current_working_directory alias and keeps a subpath', () => {
    const context = parseSandboxContext(
      restricted([
        {
          path: { type: 'special', value: { kind: 'current_working_directory', subpath: 'docs' } },
          access: 'read',
        },
      ]),
    );
    const fs = context?.permissions.type === 'managed' ? context.permissions.file_system : null;
    expect(fs?.type === 'restricted' && fs.entries[0]?.path).toEqual({
      type: 'special',
      value: { kind: 'project_roots', subpath: 'docs' },
    });
  });
  it('refuses a project_roots subpath that escapes', () => {
    const e = failure(() =>
      parseSandboxContext(
        restricted([
          { path: { type: 'special', value: { kind: 'project_roots', subpath: '../x' } }, access: 'read' },
        ]),
      ),
    );
    expect(e.kind).toBe('invalid_params');
    expect(e.message).toMatch(/must not contain `\.\.`/);
    expect(
      failure(() =>
        parseSandboxContext(
          restricted([
            { path: { type: 'special', value: { kind: 'project_roots', subpath: '/etc' } }, access: 'read' },
          ]),
        ),
      ).message,
    ).toMatch(/must be relative/);
  });
  it('defaults windowsSandboxLevel to disabled and network to restricted', () => {
    const context = parseSandboxContext({
      permissions: { type: 'managed', file_system: { type: 'unrestricted' } },
    });
    expect(context?.windowsSandboxLevel).toBe('disabled');
    expect(context?.permissions).toEqual({
      type: 'managed',
      file_system: { type: 'unrestricted' },
      network: 'restricted',
    });
  });
  it('accepts every Windows sandbox level', () => {
    for (const level of ['disabled', 'restricted-token', 'elevated', 'mxc']) {
      expect(
        parseSandboxContext({ permissions: { type: 'disabled' }, windowsSandboxLevel: level })
          ?.windowsSandboxLevel,
      ).toBe(level);
    }
  });
  it.each([
    [{}, 'missing field `permissions`', 'permissions'],
    [{ permissions: {} }, 'missing field `type`', 'permissions.type'],
    [{ permissions: { type: 'managed' } }, 'missing field `file_system`', 'permissions.file_system'],
    [
      { permissions: { type: 'managed', file_system: { type: 'restricted' } } },
      'missing field `entries`',
      'permissions.file_system.entries',
    ],
    [
      { permissions: { type: 'bogus' } },
      'unknown variant `bogus`, expected one of `managed`, `disabled`, `external`',
      'permissions.type',
    ],
    [
      { permissions: { type: 'disabled' }, windowsSandboxLevel: 'restricted_token' },
      'unknown variant `restricted_token`, expected one of `disabled`, `restricted-token`, `elevated`, `mxc`',
      'windowsSandboxLevel',
    ],
    [{ permissions: { type: 'disabled' }, cwd: '/w' }, 'invalid URI: relative URL without a base', 'cwd'],
    [
      restricted([{ path: { type: 'path', path: 'w' }, access: 'read' }]),
      'invalid URI: relative URL without a base',
      'permissions.file_system.entries.0.path.path',
    ],
    [
      restricted([{ path: { type: 'path', path: 'file:///w' }, access: 'rw' }]),
      'unknown variant `rw`, expected one of `read`, `write`, `deny`',
      'permissions.file_system.entries.0.access',
    ],
    [
      { permissions: { type: 'disabled' }, workspaceRoots: 'file:///w' },
      'invalid type: string "file:///w", expected a sequence',
      'workspaceRoots',
    ],
  ])('rejects %j with a serde-style message', (raw, message, field) => {
    const e = failure(() => parseSandboxContext(raw));
    expect(e.kind).toBe('invalid_params');
    expect(e.code).toBe(-32602);
    expect(e.message).toBe(message);
    expect(e.extra).toEqual({ field });
  });
  it('treats null and absence as no sandbox', () => {
    expect(parseSandboxContext(null)).toBeNull();
    expect(parseSandboxContext(undefined)).toBeNull();
  });
});

describe('parseParams', () => {
  it('parses readFile with a null sandbox, keeping the path taken apart once', () => {
    const parsed = parseParams('fs/readFile', { path: 'FILE:///a/./b', sandbox: null });
    expect(parsed).toEqual({ path: { host: '', drive: null, segments: ['a', 'b'] }, sandbox: null });
    expect(nativePathOf(parsed.path, 'linux')).toBe('/a/b');
  });
  it('names a missing field', () => {
    expect(failure(() => parseParams('fs/readFile', {})).message).toBe('missing field `path`');
    expect(failure(() => parseParams('fs/writeFile', { path: 'file:///x' })).message).toBe(
      'missing field `dataBase64`',
    );
    expect(
      failure(() => parseParams('fs/copy', { sourcePath: 'file:///a', destinationPath: 'file:///b' }))
        .message,
    ).toBe('missing field `recursive`');
  });
  it('gives the reference messages for bad URIs', () => {
    expect(failure(() => parseParams('fs/readFile', { path: '/tmp/x' })).message).toBe(
      'invalid URI: relative URL without a base',
    );
    expect(failure(() => parseParams('fs/readFile', { path: 'http://example.com/x' })).message).toBe(
      'unsupported path URI scheme `http`',
    );
  });
  it('accepts writeFile permissions as three octal digits and refuses special bits', () => {
    const base = { path: 'file:///w/a', dataBase64: '' };
    expect(parseParams('fs/writeFile', { ...base, permissions: '0600' }).permissions).toBe('0600');
    expect(parseParams('fs/writeFile', { ...base, permissions: '755' }).permissions).toBe('755');
    for (const permissions of ['4755', '01777', '0o644', '0888', '64', 420]) {
      expect(() => parseParams('fs/writeFile', { ...base, permissions })).toThrow();
    }
  });
  it('refuses non-object params', () => {
    expect(failure(() => parseParams('fs/readFile', null)).message).toBe(
      'invalid type: null, expected a map',
    );
  });
  it('parses the writeFile extensions', () => {
    const sha = 'A'.repeat(64);
    expect(
      parseParams('fs/writeFile', { path: 'file:///x', dataBase64: '', mode: 'create', expectedSha256: sha }),
    ).toMatchObject({ mode: 'create', expectedSha256: 'a'.repeat(64) });
    expect(
      failure(() => parseParams('fs/writeFile', { path: 'file:///x', dataBase64: '', mode: 'append' }))
        .message,
    ).toBe('unknown variant `append`, expected `overwrite` or `create`');
    expect(
      failure(() => parseParams('fs/writeFile', { path: 'file:///x', dataBase64: '', expectedSha256: 'abc' }))
        .message,
    ).toBe('expectedSha256 must be 64 hexadecimal characters');
  });
  it('accepts null for optional flags and applies their defaults', () => {
    expect(parseParams('fs/remove', { path: 'file:///x', recursive: null, force: false })).toMatchObject({
      recursive: true,
      force: false,
    });
    expect(parseParams('fs/createDirectory', { path: 'file:///x' })).toMatchObject({ recursive: true });
    expect(parseParams('fs/writeFile', { path: 'file:///x', dataBase64: '' })).toMatchObject({
      mode: 'overwrite',
    });
    expect(failure(() => parseParams('fs/remove', { path: 'file:///x', recursive: 'yes' })).message).toBe(
      'invalid type: string "yes", expected a boolean',
    );
  });
  it('bounds fs/walk like the reference', () => {
    const options = {
      maxDepth: 64,
      maxDirectories: 10000,
      maxEntries: 50000,
      followDirectorySymlinks: false,
    };
    expect(parseParams('fs/walk', { path: 'file:///w', options }).options).toEqual({
      ...options,
      pruneHiddenDirectories: false,
      includeSymlinks: false,
    });
    const e = failure(() =>
      parseParams('fs/walk', { path: 'file:///w', options: { ...options, maxDepth: 65 } }),
    );
    expect(e.kind).toBe('invalid_request');
    expect(e.message).toBe(
      'filesystem walk limits exceed maximums: depth=64, directories=10000, entries=50000',
    );
    const zero = failure(() =>
      parseParams('fs/walk', { path: 'file:///w', options: { ...options, maxEntries: 0 } }),
    );
    expect([zero.kind, zero.message]).toEqual([
      'invalid_request',
      'filesystem walk limits must be greater than zero',
    ]);
    // Every option defaults to the most the limits allow; a caller names only what it narrows.
    const widest = {
      maxDepth: 64,
      maxDirectories: 10000,
      maxEntries: 50000,
      followDirectorySymlinks: false,
      pruneHiddenDirectories: false,
      includeSymlinks: false,
    };
    expect(parseParams('fs/walk', { path: 'file:///w' }).options).toEqual(widest);
    expect(parseParams('fs/walk', { path: 'file:///w', options: null }).options).toEqual(widest);
    expect(parseParams('fs/walk', { path: 'file:///w', options: { maxDepth: 2 } }).options).toEqual({
      ...widest,
      maxDepth: 2,
    });
    expect(
      parseParams('fs/walk', { path: 'file:///w', options: { ...options, pruneHiddenDirectories: true } })
        .options.pruneHiddenDirectories,
    ).toBe(true);
  });
  it('bounds fs/readBlock like the reference', () => {
    expect(parseParams('fs/readBlock', { handleId: 'h', offset: 6, len: 3 })).toEqual({
      handleId: 'h',
      offset: 6,
      len: 3,
    });
    for (const len of [0, 1048577, 1099511627776]) {
      const e = failure(() => parseParams('fs/readBlock', { handleId: 'h', offset: 0, len }));
      expect(e.kind).toBe('invalid_request');
      expect(e.message).toBe('file read block length must be between 1 and 1048576');
    }
    const negative = failure(() => parseParams('fs/readBlock', { handleId: 'h', offset: 0, len: -1 }));
    expect([negative.kind, negative.message]).toEqual(['invalid_params', 'invalid number']);
    expect(
      failure(() => parseParams('fs/readBlock', { handleId: 'h', offset: 2 ** 60, len: 1 })).message,
    ).toBe('invalid number');
  });
  it('validates fs/open', () => {
    expect(parseParams('fs/open', { handleId: 'h-1', path: 'file:///x' })).toMatchObject({ handleId: 'h-1' });
    expect(
      failure(() => parseParams('fs/open', { handleId: 'h', path: 'file:///x', mode: 'append' })).message,
    ).toBe('unknown variant `append`, expected `read` or `replace`');
    expect(parseParams('fs/open', { handleId: 'h', path: 'file:///x', mode: 'replace' })).toMatchObject({
      mode: 'replace',
    });
    expect(parseParams('fs/open', { handleId: 'h', path: 'file:///x' })).toMatchObject({ mode: 'read' });
    const handleId = 'x'.repeat(33);
    for (const badLength of [
      () => parseParams('fs/open', { handleId, path: 'file:///x' }),
      () => parseParams('fs/readBlock', { handleId, offset: 0, len: 1 }),
      () => parseParams('fs/close', { handleId: '' }),
    ]) {
      const e = failure(badLength);
      expect([e.kind, e.message]).toEqual([
        'invalid_request',
        'file handle id must be between 1 and 32 bytes',
      ]);
    }
    expect(parseParams('fs/close', { handleId: 'anything' })).toEqual({ handleId: 'anything' });
  });
  it('validates the internal helper ops', () => {
    expect(parseParams('fs/openForRead', { path: 'file:///x', sandbox: null })).toEqual({
      path: { host: '', drive: null, segments: ['x'] },
      sandbox: null,
    });
    expect(
      parseParams('fs/readRange', {
        path: 'file:///x',
        offset: 0,
        len: 10,
        identity: { dev: '2049', ino: '123' },
      }),
    ).toMatchObject({ identity: { dev: '2049', ino: '123' } });
    expect(
      failure(() =>
        parseParams('fs/readRange', { path: 'file:///x', offset: 0, len: 1, identity: { dev: 1, ino: '1' } }),
      ).message,
    ).toBe('invalid type: integer `1`, expected a string');
  });
});

const STAGED = { name: '.fs-sandbox-0123456789abcdef01234567-1.tmp', dev: '1', ino: '2' };
const WALK_OPTIONS = { maxDepth: 2, maxDirectories: 10, maxEntries: 10, followDirectorySymlinks: false };

/** Valid params for every method with a schema; the Record type makes a new method need a row. */
const VALID_PARAMS: Record<Method, Record<string, unknown>> = {
  'fs/readFile': { path: 'file:///w/a' },
  'fs/writeFile': { path: 'file:///w/a', dataBase64: 'aGk=' },
  'fs/readTextFile': { path: 'file:///w/a' },
  'fs/edit': { path: 'file:///w/a', edits: [{ oldText: 'a', newText: 'b' }] },
  'fs/createDirectory': { path: 'file:///w/d' },
  'fs/getMetadata': { path: 'file:///w/a' },
  'fs/canonicalize': { path: 'file:///w/a' },
  'fs/readDirectory': { path: 'file:///w' },
  'fs/remove': { path: 'file:///w/a' },
  'fs/copy': { sourcePath: 'file:///w/a', destinationPath: 'file:///w/b', recursive: false },
  'fs/walk': { path: 'file:///w', options: WALK_OPTIONS },
  'fs/search': { path: 'file:///w', pattern: 'x' },
  'fs/glob': { path: 'file:///w', patterns: ['*.ts'] },
  'fs/open': { handleId: 'h', path: 'file:///w/a' },
  'fs/readBlock': { handleId: 'h', offset: 0, len: 1 },
  'fs/writeBlock': { handleId: 'h', offset: 0, chunk: 'aGk=' },
  'fs/close': { handleId: 'h' },
  'fs/rename': { sourcePath: 'file:///w/a', destinationPath: 'file:///w/b' },
  'fs/batch': { operations: [{ method: 'fs/readFile', params: { path: 'file:///w/a' } }] },
  'fs/explainAccess': { path: 'file:///w/a' },
  'fs/openForRead': { path: 'file:///w/a' },
  'fs/stageWrite': { path: 'file:///w/a' },
  'fs/writeRange': { path: 'file:///w/a', staged: STAGED, offset: 0, chunk: 'aGk=' },
  'fs/publishStaged': { path: 'file:///w/a', staged: STAGED },
  'fs/discardStaged': { path: 'file:///w/a', staged: STAGED },
  'fs/readRange': { path: 'file:///w/a', offset: 0, len: 1 },
  'fs/removeTemps': { path: 'file:///w', tag: '0123456789abcdef01234567', recursive: false },
  'fs/applyPatch': { patch: '*** Begin Patch\n*** Delete File: a\n*** End Patch', cwd: 'file:///w' },
  initialize: { clientName: 'test' },
  'environment/info': {},
  'environment/status': {},
  'process/start': { processId: 'p', argv: ['/bin/true'], cwd: 'file:///w', env: {}, tty: false },
  'process/read': { processId: 'p' },
  'process/write': { processId: 'p', chunk: 'aGk=', writeId: 'w' },
  'process/signal': { processId: 'p', signal: 'interrupt' },
  'process/terminate': { processId: 'p' },
};
/** Methods whose params carry no sandbox context. */
const WITHOUT_SANDBOX = [
  'fs/readBlock',
  'fs/writeBlock',
  'fs/close',
  'initialize',
  'environment/info',
  'environment/status',
  'process/read',
  'process/write',
  'process/signal',
  'process/terminate',
];
const METHODS = Object.keys(VALID_PARAMS) as Method[];
const WITH_SANDBOX = METHODS.filter((method) => !WITHOUT_SANDBOX.includes(method));
// The handshake accepts fields beyond `clientName`, as the reference does.
const STRICT = METHODS.filter((method) => method !== 'initialize');

describe('unknown keys in params', () => {
  it.each(STRICT)('%s refuses an unknown key, naming the method and the key', (method) => {
    expect(() => parseParams(method, VALID_PARAMS[method])).not.toThrow();
    const e = failure(() => parseParams(method, { ...VALID_PARAMS[method], frobnicate: true }));
    expect([e.kind, e.code, e.extra]).toEqual(['invalid_params', -32602, { field: 'frobnicate' }]);
    expect(e.message).toMatch(new RegExp(`^unknown field \`frobnicate\` in ${method} params, expected `));
  });
  it.each(
    WITH_SANDBOX.flatMap((method) => ['sandBox', 'Sandbox', 'SANDBOX', 'sandbx'].map((key) => [method, key])),
  )('%s refuses `%s` and suggests `sandbox`', (method, key) => {
    const restrictedContext = restricted([{ path: { type: 'path', path: 'file:///w' }, access: 'write' }]);
    const e = failure(() =>
      parseParams(method as Method, { ...VALID_PARAMS[method as Method], [key]: restrictedContext }),
    );
    expect(e.kind).toBe('invalid_params');
    expect(e.message).toBe(`unknown field \`${key}\` in ${method} params; did you mean \`sandbox\`?`);
    expect(e.extra).toEqual({ field: key });
  });
  it('lists the known keys when none is close', () => {
    expect(failure(() => parseParams('fs/close', { handleId: 'h', sandbox: null })).message).toBe(
      'unknown field `sandbox` in fs/close params, expected `handleId`',
    );
    expect(
      failure(() => parseParams('fs/writeFile', { ...VALID_PARAMS['fs/writeFile'], x: 1 })).message,
    ).toBe(
      'unknown field `x` in fs/writeFile params, expected one of `path`, `dataBase64`, `sandbox`, `mode`, `expectedSha256`, `permissions`',
    );
  });
  it.each([
    ['fs/remove', { path: 'file:///w/a', recursve: false }, 'recursve', 'recursive'],
    ['fs/remove', { path: 'file:///w/a', Force: false }, 'Force', 'force'],
    ['fs/writeFile', { path: 'file:///w/a', dataBase64: '', Mode: 'create' }, 'Mode', 'mode'],
    [
      'fs/writeFile',
      { path: 'file:///w/a', dataBase64: '', expected_sha256: 'a'.repeat(64) },
      'expected_sha256',
      'expectedSha256',
    ],
    [
      'fs/copy',
      {
        sourcePath: 'file:///a',
        destinationPath: 'file:///b',
        recursive: true,
        destination_path: 'file:///c',
      },
      'destination_path',
      'destinationPath',
    ],
  ] as const)('%s: %j suggests the intended key', (method, raw, key, suggestion) => {
    const e = failure(() => parseParams(method, raw));
    expect(e.message).toBe(`unknown field \`${key}\` in ${method} params; did you mean \`${suggestion}\`?`);
    expect(e.extra).toEqual({ field: key });
  });
  it('names a misspelled key rather than the required key it leaves missing', () => {
    const e = failure(() => parseParams('fs/writeFile', { path: 'file:///w/a', dataBase46: 'aGk=' }));
    expect(e.message).toBe('unknown field `dataBase46` in fs/writeFile params; did you mean `dataBase64`?');
  });
  it('refuses unknown keys in fs/walk options and fs/readRange identity, saying where', () => {
    const walk = failure(() =>
      parseParams('fs/walk', { path: 'file:///w', options: { ...WALK_OPTIONS, max_depth: 1 } }),
    );
    expect(walk.message).toBe(
      'unknown field `max_depth` in fs/walk params at `options`; did you mean `maxDepth`?',
    );
    expect(walk.extra).toEqual({ field: 'options.max_depth' });
    const identity = failure(() =>
      parseParams('fs/readRange', {
        ...VALID_PARAMS['fs/readRange'],
        identity: { dev: '1', ino: '2', gen: '3' },
      }),
    );
    expect(identity.message).toBe(
      'unknown field `gen` in fs/readRange params at `identity`, expected `dev` or `ino`',
    );
  });
  it('keeps accepting the extension fields Codex clients send inside a sandbox context', () => {
    const sandbox = {
      ...restricted([
        { path: { type: 'path', path: 'file:///w' }, access: 'write', missing_path_behavior: 'skip' },
        { path: { type: 'special', value: { kind: 'project_roots', subpath: 'docs' } }, access: 'read' },
      ]),
      cwd: 'file:///w',
      workspaceRoots: ['file:///w'],
      userHomeDir: 'file:///home/u',
      temporaryDirectories: ['file:///tmp'],
      windowsSandboxPrivateDesktop: false,
      useLegacyLandlock: false,
      policyContext: { profile: ':workspace', source: 'config' },
    };
    const parsed = parseParams('fs/writeFile', { ...VALID_PARAMS['fs/writeFile'], sandbox });
    expect(parsed.sandbox).toMatchObject({
      userHomeDir: 'file:///home/u',
      useLegacyLandlock: false,
      permissions: {
        file_system: {
          entries: [
            { path: { type: 'path', path: 'file:///w' }, access: 'write' },
            { path: { type: 'special', value: { kind: 'project_roots', subpath: 'docs' } }, access: 'read' },
          ],
        },
      },
    });
  });
  it('refuses an unknown key on a known special path, where ignoring it would widen the entry', () => {
    const value = { kind: 'project_roots', subPath: 'docs' };
    const e = failure(() =>
      parseParams('fs/writeFile', {
        ...VALID_PARAMS['fs/writeFile'],
        sandbox: { ...restricted([{ path: { type: 'special', value }, access: 'write' }]), cwd: 'file:///w' },
      }),
    );
    expect(e.message).toBe(
      'unknown field `subPath` in fs/writeFile params at `sandbox.permissions.file_system.entries.0.path.value`; did you mean `subpath`?',
    );
    expect(e.extra).toEqual({ field: 'sandbox.permissions.file_system.entries.0.path.value.subPath' });
    const root = failure(() =>
      parseSandboxContext(
        restricted([{ path: { type: 'special', value: { kind: 'root', subpath: 'w' } }, access: 'write' }]),
      ),
    );
    expect(root.message).toBe(
      'unknown field `subpath` in sandbox context at `permissions.file_system.entries.0.path.value`, expected `kind`',
    );
  });
});

describe('results', () => {
  it('validates results', () => {
    expect(
      parseResult('fs/walk', {
        entries: [{ path: 'file:///w/a', kind: 'file' }],
        errors: [],
        truncated: false,
      }),
    ).toEqual({ entries: [{ path: 'file:///w/a', kind: 'file' }], errors: [], truncated: false });
    const e = failure(() => parseResult('fs/readBlock', { chunk: 'AA==' }));
    expect(e.kind).toBe('helper_failed');
    expect(e.message).toBe('invalid fs/readBlock result: missing field `eof`');
  });
});
