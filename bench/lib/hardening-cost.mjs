import { createBroker, launchCommand } from '@fs-sandbox/broker';
import { machineQuiet } from './settle.mjs';
import { timeLaunch } from './spawn-timing.mjs';
import { rotated, summarize } from './stats.mjs';

/**
 * What the host-privilege hardening costs a start: the real sandboxed launch of the helper (a cold
 * 1 KiB fs/readFile, spawn to exit) and of a command (`/usr/bin/true` under the same sandbox), each
 * as the broker builds it and with the hardening taken out of the same argv — the seccomp filter
 * (`--seccomp FD` and its input) and the /proc and /sys mounts (kernel-paths.ts: read-only binds,
 * masked directories and their remounts, masked files and their empty inputs) — interleaved, the
 * order rotated each round. Everything else (namespaces, the policy's mounts) is in both.
 */
export async function measureHardeningCost(fixture, sandbox, runtime, rounds) {
  const broker = createBroker({ pool: false, helperRuntime: runtime.executable.kind });
  let hardened;
  try {
    ({ launch: hardened } = await broker.prepareSandbox(sandbox));
  } finally {
    await broker.close();
  }
  const bare = withoutHardening(hardened);
  const request = `${JSON.stringify({ operation: 'fs/readFile', params: { path: fixture.oneKiB } })}\n`;
  const helper = (launch) => ({ ...launchCommand(launch), env: launch.env, inputs: launch.inputs });
  // The command's launch: the same sandbox argv, then the program in place of node and the helper.
  const command = (launch) => ({
    file: launch.sandboxProgram,
    args: [...launch.sandboxArgs, '/usr/bin/true'],
    env: launch.env,
    inputs: launch.inputs,
  });
  const subjects = {
    'helper 1 KiB read, hardened': [helper(hardened), request],
    'helper 1 KiB read, without filter and masks': [helper(bare), request],
    'command /usr/bin/true, hardened': [command(hardened), ''],
    'command /usr/bin/true, without filter and masks': [command(bare), ''],
  };
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
  const ratio = (what) =>
    summary[`${what}, hardened`].median / summary[`${what}, without filter and masks`].median;
  return {
    summary,
    ratios: { helper: ratio('helper 1 KiB read'), command: ratio('command /usr/bin/true') },
    removedArgs: hardened.sandboxArgs.length - bare.sandboxArgs.length,
  };
}

const KERNEL = /^\/(proc|sys)\//;

/** The launch with the seccomp filter and the kernel-path mounts taken out of its argv and inputs. */
function withoutHardening(launch) {
  const args = launch.sandboxArgs;
  const kept = [];
  for (let i = 0; i < args.length; i++) {
    const [arg, a, b, c] = [args[i], args[i + 1], args[i + 2], args[i + 3]];
    if (arg === '--seccomp') {
      i += 1;
    } else if (arg === '--ro-bind' && KERNEL.test(a) && a === b) {
      i += 2;
    } else if (arg === '--remount-ro' && KERNEL.test(a)) {
      i += 1;
    } else if (arg === '--perms' && b === '--tmpfs' && KERNEL.test(c)) {
      i += 3;
    } else if (arg === '--perms' && b === '--ro-bind-data' && KERNEL.test(args[i + 4])) {
      i += 4;
    } else {
      kept.push(arg);
    }
  }
  // No input is left: the filter was the first, and every empty input was a masked kernel file.
  return { ...launch, sandboxArgs: kept, inputs: undefined };
}

/** The rows as text: medians and the hardened/bare ratio of each pair. */
export function formatHardeningCost({ summary, ratios, removedArgs }) {
  const lines = [
    `Host-privilege hardening (seccomp filter + /proc and /sys masks; ${removedArgs} bwrap arguments), same rounds`,
  ];
  for (const [name, figures] of Object.entries(summary))
    lines.push(
      `  ${name.padEnd(48)} median ${figures.median.toFixed(1)} ms, p90 ${figures.p90.toFixed(1)} ms`,
    );
  lines.push(
    `  hardened / without: helper ${ratios.helper.toFixed(3)}×, command ${ratios.command.toFixed(3)}×`,
  );
  return lines.join('\n');
}
