import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { createBroker, type FsBroker, type HelperRuntimeChoice } from '@fs-sandbox/broker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BenchFixture, createFixture, sandboxFor } from '../bench/lib/fixture.mjs';
import { WarmFloor } from '../bench/lib/warm-floor.mjs';
import { ensureBuilt } from './support/build.js';

/**
 * The bench's warm floor runs the helper's real launch with its program in the helper's place: under
 * real bwrap, for each runtime this machine has, it must answer with the file's bytes, again and
 * again (a new process each time, as the pool's spares).
 */

const runtimes: HelperRuntimeChoice[] =
  process.platform === 'linux' && process.arch === 'x64' ? ['node', 'bun'] : ['node'];
let fixture: BenchFixture;
const brokers: FsBroker[] = [];

beforeAll(() => {
  ensureBuilt();
  fixture = createFixture();
});

afterAll(async () => {
  await Promise.all(brokers.map((broker) => broker.close()));
  rmSync(fixture.base, { recursive: true, force: true });
});

const LINUX = process.platform === 'linux';

describe.skipIf(!LINUX)(
  LINUX
    ? 'the warm floor under real bwrap'
    : `the warm floor: SKIPPED on ${process.platform}, its launches are bwrap's (Linux only)`,
  () => {
    it.each(runtimes)(
      'answers reads under the %s launch',
      async (runtime) => {
        const broker = createBroker({ pool: false, helperRuntime: runtime });
        brokers.push(broker);
        const { launch } = await broker.prepareSandbox(sandboxFor(fixture));
        const floor = new WarmFloor(launch, dirname(fixture.emptyScript), fixture.oneKiB);
        try {
          for (let i = 0; i < 3; i++) expect(await floor.time(fixture.oneKiB)).toBeGreaterThan(0);
          // A file the launch does not show: the program fails, and the floor says so.
          await expect(floor.time('/root/no-such-file')).rejects.toThrow(/exited/);
        } finally {
          floor.stop();
        }
      },
      120_000,
    );
  },
);
