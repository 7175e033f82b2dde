import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HelperReply } from '@fs-sandbox/helper';
import {
  FsError,
  nativeToPathUri,
  parseSandboxContext,
  type SandboxContextInput,
  toWireError,
} from '@fs-sandbox/policy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LaunchSpec, SandboxBackend } from '../src/backends/backend.js';
import { type BrokerOptions, createBroker } from '../src/broker.js';
import { routeFor } from '../src/core/routing.js';
import type { HelperLauncher } from '../src/runner/spawn-helper.js';
import { directLaunch } from './support/launches.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fs-sandbox-routing-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const managed = (entries: unknown[]) => ({
  permissions: { type: 'managed', file_system: { type: 'restricted', entries } },
});
const ROOT = (access: string) => ({ path: { type: 'special', value: { kind: 'root' } }, access });
const uri = (path: string) => nativeToPathUri(path, 'linux');

describe('routeFor', () => {
  it.each([
    ['absent', null],
    ['disabled', { permissions: { type: 'disabled' } }],
    ['external', { permissions: { type: 'external' } }],
    ['unrestricted', { permissions: { type: 'managed', file_system: { type: 'unrestricted' } } }],
    ['full_disk_write', managed([ROOT('write')])],
  ])('runs %s contexts in-process', (reason, raw) => {
    expect(routeFor(parseSandboxContext(raw), 'linux')).toEqual({ kind: 'in-process', reason });
  });

  it.each([
    ['root read', managed([ROOT('read')])],
    ['empty restricted', managed([])],
    [
      'root write narrowed by a deny',
      managed([ROOT('write'), { path: { type: 'path', path: 'file:///etc' }, access: 'deny' }]),
    ],
  ])('sends %s to the sandbox', (_name, raw) => {
    expect(routeFor(parseSandboxContext(raw), 'linux').kind).toBe('sandbox');
  });

  it('fails with the exact cwd errors, never falling back', () => {
    const nonNative = parseSandboxContext({ ...managed([ROOT('read')]), cwd: 'file:///C:/work' });
    expect(() => routeFor(nonNative, 'linux')).toThrow(
      new FsError('invalid_params', "'file:///C:/work' is invalid on 'linux'"),
    );
    const dynamic = parseSandboxContext(
      managed([{ path: { type: 'special', value: { kind: 'project_roots' } }, access: 'write' }]),
    );
    expect(() => routeFor(dynamic, 'linux')).toThrow(
      new FsError('invalid_params', 'file system sandbox context with dynamic permissions requires cwd'),
    );
  });
});

/** A broker whose sandbox side is observable: launches are recorded, replies scripted. */
function observedBroker(reply: HelperReply | (() => never), extra: BrokerOptions = {}) {
  const launches: LaunchSpec[] = [];
  const backend: SandboxBackend = {
    name: 'bwrap',
    os: 'linux',
    prepare: async (_plan, runtime) =>
      directLaunch({
        sandboxProgram: '/bin/false',
        runtime: runtime.executable.path,
        helper: runtime.helperBundle,
      }),
  };
  const launcher: HelperLauncher = async (launch) => {
    launches.push(launch);
    return typeof reply === 'function' ? reply() : reply;
  };
  const broker = createBroker({
    os: 'linux',
    env: {},
    backendFor: () => backend,
    launcher,
    helperBundle: process.execPath,
    ...extra,
  });
  return { broker, launches };
}

async function failureOf(promise: Promise<unknown>): Promise<FsError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(FsError);
    return error as FsError;
  }
  throw new Error('expected a failure');
}

const workspace = () =>
  ({
    ...managed([{ path: { type: 'path', path: uri(dir) }, access: 'write' }]),
    cwd: uri(dir),
  }) as SandboxContextInput;

describe('createBroker routing', () => {
  it('runs a context that needs no sandbox in-process, for real', async () => {
    const { broker, launches } = observedBroker({
      status: 'error',
      payload: toWireError(new FsError('internal_error', 'x')),
    });
    const path = join(dir, 'in-process.txt');
    const { result, info } = await broker.callWithInfo('fs/writeFile', {
      path: uri(path),
      dataBase64: 'aGk=',
    });
    expect(result).toEqual({});
    expect(info).toEqual({ sandboxed: false, backend: null });
    expect(await readFile(path, 'utf8')).toBe('hi');
    expect(launches).toHaveLength(0);
  });

  it('never runs a sandboxed context in-process when the sandbox is unavailable', async () => {
    const broker = createBroker({
      os: 'linux',
      env: {},
      helperBundle: process.execPath,
      backendFor: () => {
        throw new FsError('sandbox_unavailable', 'no sandbox here');
      },
    });
    const path = join(dir, 'must-not-exist.txt');
    const error = await failureOf(
      broker.call('fs/writeFile', { path: uri(path), dataBase64: 'aGk=', sandbox: workspace() }),
    );
    expect([error.kind, error.message]).toEqual(['sandbox_unavailable', 'no sandbox here']);
    await expect(stat(path)).rejects.toThrow();
  });

  it('sends a sandboxed write to the launcher with the bytes in binary framing', async () => {
    let seen: unknown;
    const broker = createBroker({
      os: 'linux',
      env: {},
      helperBundle: process.execPath,
      backendFor: () => ({
        name: 'bwrap',
        os: 'linux',
        prepare: async (_plan, runtime) =>
          directLaunch({
            sandboxProgram: 'x',
            runtime: runtime.executable.path,
            helper: runtime.helperBundle,
          }),
      }),
      launcher: async (_launch, request) => {
        seen = request;
        return { status: 'ok', payload: { operation: 'fs/writeFile', response: {} } };
      },
    });
    const path = uri(join(dir, 'w.txt'));
    const { info } = await broker.callWithInfo('fs/writeFile', {
      path,
      dataBase64: 'AAEC',
      sandbox: workspace(),
    });
    expect(info).toEqual({ sandboxed: true, backend: 'bwrap' });
    // Decoded once by the broker; the encoder sends these bytes raw after the JSON line.
    const request = seen as { params: Record<string, unknown>; sandboxed: boolean };
    expect(request.params.path).toBe(join(dir, 'w.txt'));
    expect([...(request.params.dataBase64 as Uint8Array)]).toEqual([0, 1, 2]);
    expect(request.params).not.toHaveProperty('sandbox');
    expect(request.sandboxed).toBe(true);
  });

  it('validates params and base64 before any spawn', async () => {
    const { broker, launches } = observedBroker({
      status: 'ok',
      payload: { operation: 'fs/writeFile', response: {} },
    });
    const badBase64 = await failureOf(
      broker.call('fs/writeFile', {
        path: uri(join(dir, 'b')),
        dataBase64: '%%%not-base64',
        sandbox: workspace(),
      }),
    );
    expect([badBase64.kind, badBase64.message]).toEqual([
      'invalid_request',
      'fs/writeFile requires valid base64 dataBase64: Invalid symbol 37, offset 0.',
    ]);
    const missing = await failureOf(
      broker.callWithInfo('fs/writeFile', { path: uri(join(dir, 'b')), sandbox: workspace() }),
    );
    expect([missing.kind, missing.message]).toEqual(['invalid_params', 'missing field `dataBase64`']);
    const relative = await failureOf(
      broker.call('fs/readFile', { path: 'ro/hello.txt', sandbox: workspace() }),
    );
    // The library's words name the field and the URI to pass; the wire's stay the reference's.
    expect(relative.message).toBe(
      '`path` takes a file: URI, not a path `ro/hello.txt`: pass file:///abs/path (url.pathToFileURL(path).href makes one) [invalid URI: relative URL without a base]',
    );
    expect(relative.extra).toEqual({ field: 'path' });
    const native = await failureOf(
      broker.call('fs/readFile', { path: '/w/hello.txt', sandbox: workspace() }),
    );
    expect(native.message).toMatch(
      /^`path` takes a file: URI, not a path `\/w\/hello.txt`: pass file:\/\/\/w\/hello.txt /,
    );
    const inContext = await failureOf(
      broker.call('fs/readFile', { path: uri(join(dir, 'a')), sandbox: { ...workspace(), cwd: '/w' } }),
    );
    expect(inContext.message).toMatch(
      /^`sandbox.cwd` takes a file: URI, not a path `\/w`: pass file:\/\/\/w /,
    );
    // A Windows path is no URI either (its drive letter reads as a scheme): the same words, with
    // the wire's own in brackets; on Windows the URI to pass is its own.
    const drive = await failureOf(broker.call('fs/readFile', { path: 'C:\\w\\a.txt', sandbox: workspace() }));
    expect([drive.message, drive.extra]).toEqual([
      '`path` takes a file: URI, not a path `C:\\w\\a.txt`: pass file:///abs/path (url.pathToFileURL(path).href makes one) [unsupported path URI scheme `c`]',
      { field: 'path' },
    ]);
    const onWindows = await failureOf(
      observedBroker(
        { status: 'ok', payload: { operation: 'fs/readFile', response: {} } },
        { os: 'windows' },
      ).broker.call('fs/readFile', { path: 'C:\\w\\a.txt', sandbox: null }),
    );
    expect(onWindows.message).toMatch(
      /^`path` takes a file: URI, not a path `C:\\w\\a\.txt`: pass file:\/\/\/C:\/w\/a\.txt /,
    );
    // explainAccess and a command's cwd taken from its context say the same.
    const explained = await failureOf(broker.explainAccess({ path: '/w/a', sandbox: workspace() }));
    expect([explained.message, explained.extra]).toEqual([
      '`path` takes a file: URI, not a path `/w/a`: pass file:///w/a (url.pathToFileURL(path).href makes one) [invalid URI: relative URL without a base]',
      { field: 'path' },
    ]);
    const commandInContext = await failureOf(
      broker.run(['true'], { sandbox: { ...workspace(), cwd: '/w' } }),
    );
    expect([commandInContext.message, commandInContext.extra]).toEqual([
      '`sandbox.cwd` takes a file: URI, not a path `/w`: pass file:///w (url.pathToFileURL(path).href makes one) [invalid URI: relative URL without a base]',
      { field: 'sandbox.cwd' },
    ]);
    const wire = await failureOf(
      broker.callWithInfo('fs/readFile', { path: 'ro/hello.txt', sandbox: workspace() }),
    );
    expect(wire.message).toBe('invalid URI: relative URL without a base');
    expect(launches).toHaveLength(0);
  });

  it('answers clear denials before spawning, and leaves them to the kernel with precheck off', async () => {
    const reply: HelperReply = {
      status: 'error',
      payload: {
        code: -32004,
        message: 'No such file or directory (os error 2)',
        data: { errorKind: 'not_found' },
      },
    };
    const checked = observedBroker(reply);
    const outside = { path: uri('/etc/evil'), dataBase64: '', sandbox: workspace() };
    const denied = await failureOf(checked.broker.call('fs/writeFile', outside));
    expect([denied.kind, denied.message]).toEqual([
      'permission_denied',
      'cannot write /etc/evil: outside writable roots',
    ]);
    expect(checked.launches).toHaveLength(0);

    const unchecked = observedBroker(reply, { precheck: false });
    const fromKernel = await failureOf(unchecked.broker.call('fs/writeFile', outside));
    expect([fromKernel.kind, fromKernel.code]).toEqual(['not_found', -32004]);
    expect(unchecked.launches).toHaveLength(1);
  });

  it('maps replies and failures to FsError in one place', async () => {
    const withData = observedBroker({
      status: 'error',
      payload: {
        code: -32603,
        message: 'sandbox view is stale',
        data: { errorKind: 'helper_failed', stale: true },
      },
    });
    const stale = await failureOf(
      withData.broker.call('fs/getMetadata', { path: uri(dir), sandbox: workspace() }),
    );
    expect([stale.kind, stale.message, stale.extra]).toEqual([
      'helper_failed',
      'sandbox view is stale',
      { stale: true },
    ]);

    const crashing = observedBroker(() => {
      throw new TypeError('boom');
    });
    const internal = await failureOf(
      crashing.broker.call('fs/getMetadata', { path: uri(dir), sandbox: workspace() }),
    );
    expect([internal.kind, internal.message]).toEqual(['internal_error', 'internal broker error: boom']);

    const unknown = await failureOf(crashing.broker.callWithInfo('fs/frobnicate' as 'fs/readFile', {}));
    expect(unknown.kind).toBe('invalid_request');
  });

  it('returns binary reply fields as Buffers', async () => {
    const data = Buffer.from('bytes');
    const { broker } = observedBroker({
      status: 'ok',
      payload: { operation: 'fs/readFile', response: { dataBase64: '' } },
      binary: { field: 'dataBase64', data },
    });
    const result = (await broker.call('fs/readFile', {
      path: uri(join(dir, 'x')),
      sandbox: workspace(),
    })) as {
      dataBase64: Uint8Array;
    };
    expect(Buffer.from(result.dataBase64).toString()).toBe('bytes');
  });

  it('refuses calls after close', async () => {
    const { broker } = observedBroker({ status: 'ok', payload: { operation: 'fs/readFile', response: {} } });
    await broker.close();
    expect((await failureOf(broker.call('fs/readFile', { path: uri(dir) }))).kind).toBe('internal_error');
  });
});

describe('createBroker({ requireSandbox: true })', () => {
  const ok: HelperReply = { status: 'ok', payload: { operation: 'fs/writeFile', response: {} } };

  it.each([
    ['absent', undefined, 'has no sandbox context (`sandbox` is missing or null)'],
    ['null', null, 'has no sandbox context (`sandbox` is missing or null)'],
    [
      'disabled',
      { permissions: { type: 'disabled' } },
      'turns the sandbox off (`permissions.type` is `disabled`)',
    ],
    [
      'external',
      { permissions: { type: 'external' } },
      'leaves isolation to the caller (`permissions.type` is `external`)',
    ],
    [
      'unrestricted',
      { permissions: { type: 'managed', file_system: { type: 'unrestricted' } } },
      'does not restrict the file system (`file_system.type` is `unrestricted`)',
    ],
    [
      'full-disk write',
      managed([ROOT('write')]),
      'grants write access to the whole disk (`root` write with nothing narrowing it)',
    ],
  ])('refuses a request whose context is %s, before anything runs', async (name, sandbox, why) => {
    const { broker, launches } = observedBroker(ok, { requireSandbox: true });
    const path = join(dir, `required-${name}.txt`);
    const params = { path: uri(path), dataBase64: 'aGk=', ...(sandbox === undefined ? {} : { sandbox }) };
    const error = await failureOf(broker.callWithInfo('fs/writeFile', params));
    expect([error.kind, error.code]).toEqual(['permission_denied', -32600]);
    expect(error.message).toBe(
      `refused: this broker requires a sandbox, and the request ${why}; ` +
        'send a `sandbox` whose `permissions` are `managed` with a `restricted` `file_system` that does not grant `root` write',
    );
    expect(launches).toHaveLength(0);
    await expect(stat(path)).rejects.toThrow();
  });

  it('runs a restricted context in the sandbox as usual', async () => {
    const { broker, launches } = observedBroker(ok, { requireSandbox: true });
    const { info } = await broker.callWithInfo('fs/writeFile', {
      path: uri(join(dir, 'required-ok.txt')),
      dataBase64: 'aGk=',
      sandbox: workspace(),
    });
    expect(info).toEqual({ sandboxed: true, backend: 'bwrap' });
    expect(launches).toHaveLength(1);
  });

  it('still answers bad params as invalid_params first', async () => {
    const { broker } = observedBroker(ok, { requireSandbox: true });
    const error = await failureOf(
      broker.callWithInfo('fs/writeFile', {
        path: uri(join(dir, 'x')),
        dataBase64: '',
        sandBox: workspace(),
      }),
    );
    expect([error.kind, error.message]).toEqual([
      'invalid_params',
      'unknown field `sandBox` in fs/writeFile params; did you mean `sandbox`?',
    ]);
  });
});

describe('createBroker({ serverPolicy })', () => {
  const ok: HelperReply = { status: 'ok', payload: { operation: 'fs/writeFile', response: {} } };
  const policy = () => workspace();
  const own = () =>
    ({
      ...managed([{ path: { type: 'path', path: uri(join(dir, 'own')) }, access: 'write' }]),
      cwd: uri(dir),
    }) as SandboxContextInput;

  it.each([
    ['absent', undefined],
    ['null', null],
  ])('runs a request whose sandbox is %s under the policy, sandboxed', async (_name, sandbox) => {
    for (const requireSandbox of [false, true]) {
      const { broker, launches } = observedBroker(ok, { serverPolicy: policy(), requireSandbox });
      const params = {
        path: uri(join(dir, 'p.txt')),
        dataBase64: 'aGk=',
        ...(sandbox === undefined ? {} : { sandbox }),
      };
      const { info } = await broker.callWithInfo('fs/writeFile', params);
      expect(info).toEqual({ sandboxed: true, backend: 'bwrap' });
      expect(launches).toHaveLength(1);
      await expect(stat(join(dir, 'p.txt'))).rejects.toThrow();
    }
  });

  it("judges such a request by the policy's rules before anything runs", async () => {
    const { broker, launches } = observedBroker(ok, { serverPolicy: own() });
    const error = await failureOf(
      broker.call('fs/writeFile', { path: uri(join(dir, 'p.txt')), dataBase64: 'aGk=' }),
    );
    expect(error.kind).toBe('permission_denied');
    expect(launches).toHaveLength(0);
  });

  it('leaves a request with its own context to that context', async () => {
    const { broker, launches } = observedBroker(ok, { serverPolicy: own() });
    const { info } = await broker.callWithInfo('fs/writeFile', {
      path: uri(join(dir, 'p.txt')),
      dataBase64: 'aGk=',
      sandbox: workspace(),
    });
    expect(info.sandboxed).toBe(true);
    expect(launches).toHaveLength(1);
    // An unsandboxed context of the caller is still the caller's (refused only with requireSandbox).
    const disabled = { permissions: { type: 'disabled' } } as SandboxContextInput;
    const plain = observedBroker(ok, { serverPolicy: own() });
    const path = join(dir, 'caller-disabled.txt');
    const outcome = await plain.broker.callWithInfo('fs/writeFile', {
      path: uri(path),
      dataBase64: 'aGk=',
      sandbox: disabled,
    });
    expect(outcome.info.sandboxed).toBe(false);
    expect(await readFile(path, 'utf8')).toBe('hi');
  });

  it('explains under it', async () => {
    const { broker } = observedBroker(ok, { serverPolicy: own(), requireSandbox: true });
    expect((await broker.explainAccess({ path: uri(join(dir, 'p.txt')) })).access).toBe('none');
    expect((await broker.explainAccess({ path: uri(join(dir, 'own', 'p.txt')) })).access).toBe('write');
  });

  it('refuses a policy that does not parse when the broker is made', () => {
    expect(() => observedBroker(ok, { serverPolicy: { permissions: { type: 'managed' } } })).toThrow(FsError);
  });
});
