import { createBroker } from '@fs-sandbox/broker';
import { helperLaunch, oneKiBRequest, timeLaunchRounds, trueLaunch } from './launch-rounds.mjs';

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
  const request = oneKiBRequest(fixture);
  const subjects = {
    'helper 1 KiB read, hardened': [helperLaunch(hardened), request],
    'helper 1 KiB read, without filter and masks': [helperLaunch(bare), request],
    'command /usr/bin/true, hardened': [trueLaunch(hardened), ''],
    'command /usr/bin/true, without filter and masks': [trueLaunch(bare), ''],
  };
  const summary = await timeLaunchRounds(subjects, rounds);
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
