import { launchCommand } from '@fs-sandbox/broker';
import { machineQuiet } from './settle.mjs';
import { timeLaunch } from './spawn-timing.mjs';
import { rotated, summarize } from './stats.mjs';

/** The helper's cold read of the fixture's 1 KiB file, as one request line on its stdin. */
export function oneKiBRequest(fixture) {
  return `${JSON.stringify({ operation: 'fs/readFile', params: { path: fixture.oneKiB } })}\n`;
}

/** A prepared launch as the helper runs under it. */
export function helperLaunch(launch) {
  return { ...launchCommand(launch), env: launch.env, inputs: launch.inputs };
}

/** The same sandbox argv with `/usr/bin/true` in place of the helper: a command's start. */
export function trueLaunch(launch) {
  return {
    file: launch.sandboxProgram,
    args: [...launch.sandboxArgs, '/usr/bin/true'],
    env: launch.env,
    inputs: launch.inputs,
  };
}

/**
 * Times each subject (`name → [launch, input]`) once to warm up, then `rounds` rounds, interleaved
 * in an order rotated each round, the machine let settle before each launch; a subject given an
 * input must answer with the 1 KiB file's bytes. Resolves with each subject's summary.
 */
export async function timeLaunchRounds(subjects, rounds) {
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
  return Object.fromEntries(Object.entries(samples).map(([name, list]) => [name, summarize(list)]));
}
