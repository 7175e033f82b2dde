import { PassThrough, Readable } from 'node:stream';
import type { BrokerOptions, FsBroker } from '@fs-sandbox/broker/internal';
import { describe, expect, it } from 'vitest';
import type { CliDeps } from '../src/cli/cli-io.js';
import { buildProgram } from '../src/cli/main.js';

/**
 * Which commands get a warm pool: one-shot commands (`call` and the shortcuts) run an operation or
 * two and exit, so a spare would be spawned only to be killed; `serve` is what the pool is for.
 */

async function brokerOptionsOf(argv: string[]): Promise<BrokerOptions[]> {
  const options: BrokerOptions[] = [];
  const broker = {
    call: async () => ({ dataBase64: Buffer.from('x'), isFile: true, entries: [] }),
    callWithInfo: async () => ({ result: {}, info: { sandboxed: false, backend: null } }),
    prepareSandbox: async () => {
      throw new Error('not used');
    },
    poolStats: () => null,
    close: async () => {},
  } as unknown as FsBroker;
  const deps: CliDeps = {
    io: {
      stdout: new PassThrough(),
      stderr: new PassThrough(),
      stdin: Readable.from([]),
      env: { PATH: '/usr/bin' },
      cwd: '/home/u/project',
    },
    createBroker: (brokerOptions) => {
      options.push(brokerOptions);
      return broker;
    },
    setExitCode: () => {},
  };
  await (await buildProgram(deps, argv)).parseAsync(argv, { from: 'user' });
  return options;
}

describe('warm pool per command', () => {
  it('is off for fs-sandbox call and the shortcuts', async () => {
    expect(await brokerOptionsOf(['call', 'fs/readFile', '{"path":"file:///x"}'])).toEqual([
      expect.objectContaining({ pool: false }),
    ]);
    expect(await brokerOptionsOf(['cat', '/home/u/project/a.txt'])).toEqual([
      expect.objectContaining({ pool: false }),
    ]);
    expect(await brokerOptionsOf(['stat', 'a.txt'])).toEqual([expect.objectContaining({ pool: false })]);
  });
});
