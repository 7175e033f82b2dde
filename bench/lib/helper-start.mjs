import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { machineQuiet } from './settle.mjs';
import { timeLaunch } from './spawn-timing.mjs';
import { seededShuffle } from './stats.mjs';

/**
 * The helper program alone (no sandbox): spawn -> complete reply and exit for a 1 KiB fs/readFile,
 * against `node -e 0` and `node empty.cjs`, interleaved, all with the helper's filtered environment
 * (this machine's NODE_EXTRA_CA_CERTS alone adds ~50 ms to any node start; the sandbox never passes
 * it, so it is left out of every variant).
 */
export async function measureHelperStart(fixture, runtime, rounds) {
  const empty = join(fixture.base, 'floor', 'plain-empty.cjs');
  writeFileSync(empty, '');
  const request = `${JSON.stringify({ operation: 'fs/readFile', params: { path: fixture.oneKiB } })}\n`;
  const node = (args) => ({ file: runtime.executable.path, args, env: runtime.env });
  const variants = [
    { name: 'node -e 0', launch: node(['-e', '0']), input: '' },
    { name: 'node empty.cjs', launch: node([empty]), input: '' },
    { name: 'helper 1 KiB readFile', launch: node([runtime.helperBundle]), input: request },
  ];
  for (const variant of variants) await timeLaunch(variant.launch, variant.input);
  const samples = Object.fromEntries(variants.map((variant) => [variant.name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const variant of seededShuffle(variants, 1000 + round)) {
      await machineQuiet();
      const result = await timeLaunch(variant.launch, variant.input);
      if (variant.input !== '' && result.bytes < 1024)
        throw new Error('the helper reply lacks the file bytes');
      samples[variant.name].push(result.ms);
    }
  }
  return samples;
}
