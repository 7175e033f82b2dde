import { describe, expect, it } from 'vitest';
import { FsError } from '../src/error-kinds.js';
import {
  helperRequestSchema,
  helperResponseSchema,
  parseParams,
  parseResult,
  parseSandboxContext,
  wireErrorSchema,
} from '../src/schemas/index.js';

function failure(fn: () => unknown): FsError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(FsError);
    return error as FsError;
  }
  throw new Error('expected a rejection');
}

const restricted = (entries: unknown[]) => ({
  permissions: { type: 'managed', file_system: { type: 'restricted', entries }, network: 'restricted' },
  windowsSandboxLevel: 'disabled',
});

describe('sandbox context schema', () => {
  it('parses the DESIGN example and canonicalises paths', () => {
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
  it('parses readFile with a null sandbox', () => {
    expect(parseParams('fs/readFile', { path: 'FILE:///a/./b', sandbox: null })).toEqual({
      path: 'file:///a/b',
      sandbox: null,
    });
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
  it('accepts null for optional flags', () => {
    expect(parseParams('fs/remove', { path: 'file:///x', recursive: null, force: true })).toMatchObject({
      recursive: null,
      force: true,
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
    expect(parseParams('fs/walk', { path: 'file:///w', options }).options).toEqual(options);
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
    expect(failure(() => parseParams('fs/walk', { path: 'file:///w' })).message).toBe(
      'missing field `options`',
    );
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
    expect(
      failure(() => parseParams('fs/open', { handleId: 'h', path: 'file:///x', mode: 'replace' })).message,
    ).toMatch(/not supported/);
    expect(
      failure(() => parseParams('fs/open', { handleId: 'x'.repeat(33), path: 'file:///x' })).message,
    ).toBe('file handle id must be at most 32 bytes');
    expect(parseParams('fs/close', { handleId: 'anything' })).toEqual({ handleId: 'anything' });
  });
  it('validates the internal helper ops', () => {
    expect(parseParams('fs/openForRead', { path: 'file:///x', sandbox: null })).toEqual({
      path: 'file:///x',
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

describe('results and helper protocol', () => {
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
  it('parses helper request and response lines', () => {
    expect(
      helperRequestSchema.parse({
        operation: 'fs/writeFile',
        params: { path: 'file:///x' },
        binary: { field: 'dataBase64', length: 3 },
        freshness: [{ path: '/w', dev: '1', ino: '2' }],
      }).binary,
    ).toEqual({ field: 'dataBase64', length: 3 });
    expect(helperRequestSchema.safeParse({ operation: 'fs/frobnicate', params: {} }).success).toBe(false);
    expect(
      helperResponseSchema.parse({
        status: 'ok',
        payload: { operation: 'fs/readFile', response: { dataBase64: '' } },
      }).status,
    ).toBe('ok');
    expect(
      helperResponseSchema.parse({
        status: 'error',
        payload: {
          code: -32004,
          message: 'No such file or directory (os error 2)',
          data: { errorKind: 'not_found' },
        },
      }).status,
    ).toBe('error');
  });
  it('validates wire errors, keeping extra data', () => {
    const wire = { code: -32603, message: 'stale', data: { errorKind: 'helper_failed', stale: true } };
    expect(wireErrorSchema.parse(wire)).toEqual(wire);
    expect(
      wireErrorSchema.safeParse({ code: -32603, message: 'x', data: { errorKind: 'nope' } }).success,
    ).toBe(false);
  });
});
