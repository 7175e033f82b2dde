import { performance } from 'node:perf_hooks';
import { createBroker, launchCommand } from '@fs-sandbox/broker';
import { uri } from './fixture.mjs';
import { machineQuiet, spareReady } from './settle.mjs';
import { floorLaunch, timeLaunch } from './spawn-timing.mjs';
import { seededShuffle } from './stats.mjs';

const ONE_KIB = Buffer.alloc(1024, 9).toString('base64');
const OPERATIONS = {
  readFile: (fixture) => ['fs/readFile', { path: uri(fixture.oneKiB) }],
  getMetadata: (fixture) => ['fs/getMetadata', { path: uri(fixture.oneKiB) }],
  writeFile: (fixture) => ['fs/writeFile', { path: uri(fixture.written), dataBase64: ONE_KIB }],
};

/**
 * 1 KiB fs/readFile, fs/getMetadata and fs/writeFile in-process, sandboxed cold (pool off) and
 * sandboxed warm (pool on), and the floor, all interleaved in a shuffled order per round. Before
 * every sample the warm pool's spares must be ready and the machine idle, so no variant pays for
 * another's background work.
 */
export async function measureLatencies(fixture, sandbox, runtime, rounds, baseline = null) {
  const warmPool = { size: 2, perKey: 2, idleMs: 600_000 };
  // The runtime whose floor is measured (node: its floor is node on an empty script); the compiled
  // Bun helper has no script to swap, and its figures are in the runtime table.
  const helperRuntime = runtime.executable.kind;
  const inProcess = createBroker({ pool: false });
  const cold = createBroker({ pool: false, helperRuntime });
  const warm = createBroker({ pool: warmPool, helperRuntime });
  // Another build of fs-sandbox (`--baseline DIR`), measured in the same rounds: its sandboxed
  // 1 KiB read, cold and warm, is the "before" of a change.
  const before =
    baseline === null
      ? null
      : {
          cold: baseline.createBroker({ pool: false, helperRuntime }),
          warm: baseline.createBroker({ pool: warmPool, helperRuntime }),
        };
  const spares = before === null ? 2 : 4;
  const { launch } = await cold.prepareSandbox(sandbox);
  const floor = floorLaunch(launch, runtime.helperBundle, fixture.emptyScript);
  const floorCommand = { ...launchCommand(floor), env: floor.env, inputs: floor.inputs };
  const variants = [{ name: 'floor', mode: 'floor', operation: null, run: () => timeLaunch(floorCommand) }];
  for (const [operation, make] of Object.entries(OPERATIONS)) {
    const [method, params] = make(fixture);
    const timed = (broker, withSandbox) => async () => {
      const started = performance.now();
      const result = await broker.call(method, withSandbox ? { ...params, sandbox } : params);
      if (operation === 'readFile' && result.dataBase64.length !== 1024) throw new Error('short read');
      return { ms: performance.now() - started };
    };
    variants.push(
      { name: `${operation} in-process`, mode: 'in-process', operation, run: timed(inProcess, false) },
      { name: `${operation} cold`, mode: 'cold', operation, run: timed(cold, true) },
      { name: `${operation} warm`, mode: 'warm', operation, run: timed(warm, true) },
    );
    if (before !== null && operation === 'readFile') {
      variants.push(
        { name: `${operation} cold (baseline)`, mode: 'cold', operation, run: timed(before.cold, true) },
        { name: `${operation} warm (baseline)`, mode: 'warm', operation, run: timed(before.warm, true) },
      );
    }
  }
  // Warm-up: the first sandboxed call of each broker (runtime, plan) and the pool's first spares.
  for (const variant of variants) await variant.run();
  const samples = Object.fromEntries(variants.map((variant) => [variant.name, []]));
  let notQuiet = 0;
  const failures = [];
  for (let round = 0; round < rounds; round++) {
    for (const variant of seededShuffle(variants, round + 1)) {
      await spareReady(fixture.ws, spares);
      if (!(await machineQuiet())) notQuiet += 1;
      // One failed sample (a helper killed by the machine, say) is counted and reported, and the
      // run goes on: a bench that dies on it measures nothing.
      try {
        samples[variant.name].push((await variant.run()).ms);
      } catch (error) {
        failures.push({
          variant: variant.name,
          round,
          message: error instanceof Error ? error.message : String(error),
        });
        process.stderr.write(
          `bench: ${variant.name}, round ${round + 1}: failed (${failures.at(-1).message})\n`,
        );
      }
    }
  }
  const pool = warm.poolStats();
  await Promise.all([
    inProcess.close(),
    cold.close(),
    warm.close(),
    before?.cold.close(),
    before?.warm.close(),
  ]);
  return { variants, samples, pool, notQuiet, failures, floorArgs: floorCommand.args };
}
