import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createBroker, type FsBroker, isFsError, type SandboxContextInput } from '@fs-sandbox/broker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './support/build.js';
import { createFixture, type Fixture, removeFixture, workspaceContext } from './support/fixture.js';
import { processesMatching, waitFor } from './support/processes.js';

/**
 * The library's command API (`broker.run`, `broker.spawn`) under real bwrap: the bounds it adds
 * to process/start (timeout, output cap, cancel), its option checks, and what it refuses. The
 * whole-program example with a denied write and a streamed command runs from a consumer project
 * (consumer-project.test.ts).
 */

let fixture: Fixture;
let broker: FsBroker;
let sandbox: SandboxContextInput;
const uri = (path: string) => pathToFileURL(path).href;

beforeAll(async () => {
  ensureBuilt();
  fixture = await createFixture('root');
  sandbox = workspaceContext(fixture) as SandboxContextInput;
  broker = createBroker({ pool: false });
});

afterAll(async () => {
  await broker?.close();
  if (fixture) await removeFixture(fixture);
});

async function refusal(promise: Promise<unknown>): Promise<{ kind: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (isFsError(error)) return { kind: error.kind, message: error.message };
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('broker.run', () => {
  it("runs in the context's cwd by default, with stdin given as text, output as strings or bytes", async () => {
    const text = await broker.run(['sh', '-c', 'pwd; cat; echo err >&2; exit 3'], { sandbox, stdin: 'in\n' });
    expect(text).toEqual({
      exitCode: 3,
      stdout: `${fixture.ws}\nin\n`,
      stderr: 'err\n',
      timedOut: false,
      capReached: false,
      sandboxed: true,
    });
    const bytes = await broker.run(['printf', '\\377\\000'], { sandbox, encoding: 'buffer' });
    expect(bytes.stdout).toEqual(Buffer.from([0xff, 0]));
  });

  it('kills the tree at timeoutMs (137, timedOut) and leaves nothing running', async () => {
    const started = Date.now();
    const result = await broker.run(['sh', '-c', 'sleep 41.25 & sleep 41.25'], { sandbox, timeoutMs: 300 });
    expect(result).toMatchObject({ exitCode: 137, timedOut: true });
    expect(Date.now() - started).toBeLessThan(10_000);
    await waitFor(
      () => (processesMatching('sleep 41.25').length === 0 ? true : undefined),
      5000,
      'no sleep left',
    );
  });

  it('drops output past outputBytesCap and says so; the command still runs to its end', async () => {
    const result = await broker.run(['sh', '-c', 'head -c 100000 /dev/zero; echo done > after.txt'], {
      sandbox,
      outputBytesCap: 1000,
    });
    expect(result.stdout.length).toBe(1000);
    expect(result).toMatchObject({ exitCode: 0, capReached: true });
    expect(readFileSync(join(fixture.ws, 'after.txt'), 'utf8')).toBe('done\n');
  });

  it('rejects when its signal aborts, the tree killed', async () => {
    const controller = new AbortController();
    const running = broker.run(['sleep', '30'], { sandbox, signal: controller.signal });
    setTimeout(() => controller.abort(), 200);
    expect(await refusal(running)).toMatchObject({ kind: 'internal_error', message: /cancelled/ });
  });

  it('refuses bad options by name, before anything runs', async () => {
    const before = readdirSync(fixture.ws).sort();
    const touch = ['touch', 'made.txt'];
    expect(await refusal(broker.run(touch, { sandbox, timeoutMS: 5 } as never))).toMatchObject({
      kind: 'invalid_params',
      message: /timeoutMS/,
    });
    expect(await refusal(broker.run(touch, { sandbox, processId: 'x' } as never))).toMatchObject({
      kind: 'invalid_params',
      message: /processId/,
    });
    expect(await refusal(broker.run(touch, { sandbox: { permissions: 'all' } as never }))).toMatchObject({
      kind: 'invalid_params',
    });
    expect(await refusal(broker.run(touch, { sandbox, outputBytesCap: 2 ** 40 }))).toMatchObject({
      kind: 'invalid_params',
      message: /outputBytesCap/,
    });
    expect(await refusal(broker.run([], { sandbox }))).toMatchObject({ kind: 'invalid_params' });
    expect(readdirSync(fixture.ws).sort()).toEqual(before);
  });

  it('refuses a cwd the sandbox does not show and a program it does not show', async () => {
    expect(await refusal(broker.run(['true'], { sandbox, cwd: uri(fixture.outside) }))).toMatchObject({
      kind: 'permission_denied',
    });
    expect(await refusal(broker.run([join(fixture.outside, 'tool')], { sandbox }))).toMatchObject({
      kind: 'not_found',
    });
  });

  it('runs nothing on an untrusted broker', async () => {
    const untrusted = createBroker({ pool: false, trusted: false });
    try {
      expect(await refusal(untrusted.run(['touch', 'untrusted.txt'], { sandbox }))).toMatchObject({
        kind: 'untrusted_workspace',
      });
      expect(readdirSync(fixture.ws)).not.toContain('untrusted.txt');
    } finally {
      await untrusted.close();
    }
  });
});

describe('broker.spawn', () => {
  it('streams output while the command runs and takes stdin until it is ended', async () => {
    const command = await broker.spawn(['sh', '-c', 'echo ready; read -r line; echo "got $line"'], {
      sandbox,
    });
    const stdout = command.stdout[Symbol.asyncIterator]();
    // The first line arrives while the command still waits for its stdin.
    expect(String((await stdout.next()).value)).toBe('ready\n');
    command.stdin?.end('input\n');
    expect(String((await stdout.next()).value)).toBe('got input\n');
    expect(await command.exited).toEqual({
      exitCode: 0,
      timedOut: false,
      capReached: false,
      sandboxed: true,
    });
  });

  it('kill() ends the whole tree (137)', async () => {
    const command = await broker.spawn(['sh', '-c', 'sleep 42.25 & sleep 42.25'], {
      sandbox,
      stdin: 'ignore',
    });
    expect(command.stdin).toBeNull();
    await waitFor(
      () => (processesMatching('sleep 42.25').length >= 2 ? true : undefined),
      5000,
      'both sleeps',
    );
    command.kill();
    expect((await command.exited).exitCode).toBe(137);
    await waitFor(
      () => (processesMatching('sleep 42.25').length === 0 ? true : undefined),
      5000,
      'no sleep left',
    );
  });
});
