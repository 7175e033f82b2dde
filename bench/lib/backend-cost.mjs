import { createBroker, launchCommand } from '@fs-sandbox/broker';
import { machineQuiet } from './settle.mjs';
import { timeLaunch } from './spawn-timing.mjs';
import { rotated, summarize } from './stats.mjs';

/**
 * The two Linux backends side by side: the real launch of a sandboxed read (a cold 1 KiB
 * fs/readFile, spawn to exit, no pool) and of a command (`/usr/bin/true` under the same sandbox),
 * each as the broker builds it under bwrap and under Landlock (the Bun helper's `--landlock`
 * launcher), interleaved, the order rotated each round; the read with each helper runtime.
 */
export const BACKENDS = ['bwrap', 'landlock'];

export async function measureBackendCost(fixture, sandbox, helperRuntimes, rounds) {
  const request = `${JSON.stringify({ operation: 'fs/readFile', params: { path: fixture.oneKiB } })}\n`;
  const helper = (launch) => ({ ...launchCommand(launch), env: launch.env, inputs: launch.inputs });
  // The command's launch: the same sandbox argv, then the program in place of the helper.
  const command = (launch) => ({
    file: launch.sandboxProgram,
    args: [...launch.sandboxArgs, '/usr/bin/true'],
    env: launch.env,
    inputs: launch.inputs,
  });
  const subjects = {};
  for (const backend of BACKENDS) {
    let launch;
    for (const kind of helperRuntimes) {
      const broker = createBroker({ pool: false, helperRuntime: kind, backend });
      try {
        ({ launch } = await broker.prepareSandbox(sandbox));
      } finally {
        await broker.close();
      }
      if (launch.backend !== backend)
        throw new Error(`asked for ${backend}, the broker prepared ${launch.backend}`);
      subjects[`${kind} helper 1 KiB read, ${backend}`] = [helper(launch), request];
    }
    // A command's start does not depend on the helper runtime: the last launch prepared serves.
    subjects[`command /usr/bin/true, ${backend}`] = [command(launch), ''];
  }
  const samples = Object.fromEntries(Object.keys(subjects).map((name) => [name, []]));
  const once = async (name) => {
    const [launch, input] = subjects[name];
    const result = await timeLaunch(launch, input);
    if (input !== '' && result.bytes < 1024) throw new Error(`${name}: the reply lacks the file bytes`);
    return result.ms;
  };
  for (const name of Object.keys(subjects)) await once(name);
  for (let round = 0; round < rounds; round++) {
    for (const name of rotated(Object.keys(subjects), round)) {
      await machineQuiet();
      samples[name].push(await once(name));
    }
  }
  const summary = Object.fromEntries(Object.entries(samples).map(([name, list]) => [name, summarize(list)]));
  const ratio = (what) => summary[`${what}, landlock`].median / summary[`${what}, bwrap`].median;
  const ratios = { command: ratio('command /usr/bin/true') };
  for (const kind of helperRuntimes) ratios[`${kind} helper read`] = ratio(`${kind} helper 1 KiB read`);
  return { summary, ratios };
}

/** The rows as text: medians, p90s and the landlock/bwrap ratio of each pair. */
export function formatBackendCost({ summary, ratios }) {
  const lines = ['Linux backends, same rounds'];
  for (const [name, figures] of Object.entries(summary))
    lines.push(
      `  ${name.padEnd(34)} median ${figures.median.toFixed(1)} ms, p90 ${figures.p90.toFixed(1)} ms`,
    );
  const each = Object.entries(ratios).map(([what, value]) => `${what} ${value.toFixed(3)}×`);
  lines.push(`  landlock / bwrap: ${each.join(', ')}`);
  return lines.join('\n');
}
