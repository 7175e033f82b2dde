import { createBroker } from '@fs-sandbox/broker';
import { helperLaunch, oneKiBRequest, timeLaunchRounds, trueLaunch } from './launch-rounds.mjs';

/**
 * The two Linux backends side by side: the real launch of a sandboxed read (a cold 1 KiB
 * fs/readFile, spawn to exit, no pool) and of a command (`/usr/bin/true` under the same sandbox),
 * each as the broker builds it under bwrap and under Landlock (the Bun helper's `--landlock`
 * launcher), interleaved, the order rotated each round; the read with each helper runtime.
 */
export const BACKENDS = ['bwrap', 'landlock'];

export async function measureBackendCost(fixture, sandbox, helperRuntimes, rounds) {
  const request = oneKiBRequest(fixture);
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
      subjects[`${kind} helper 1 KiB read, ${backend}`] = [helperLaunch(launch), request];
    }
    // A command's start does not depend on the helper runtime: the last launch prepared serves.
    subjects[`command /usr/bin/true, ${backend}`] = [trueLaunch(launch), ''];
  }
  const summary = await timeLaunchRounds(subjects, rounds);
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
