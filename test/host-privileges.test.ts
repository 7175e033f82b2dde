import { readFileSync } from 'node:fs';
import { chmod, lchown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './support/build.js';
import { type CliUser, NO_USER_NAMESPACES, NOBODY_UID, USERS } from './support/cli.js';
import { CHANNELS, type Channel, SandboxShell } from './support/sandbox-shell.js';

/**
 * What the kernel grants by uid whatever the mounts: a broker running as root gives its sandbox a
 * uid that may write the host's sysctls (core_pattern's `|program` runs as root on the host at the
 * next crash). Through `run`, `process/start` and a helper, as root and as nobody, with the
 * workspace profile and with the whole disk readable: no /proc/sys entry takes a write (the kernel
 * answers `test -w` no for each, the important ones are written their own current value, every one
 * once per user; only after the write of core_pattern failed, so nothing runs where writes land),
 * and the runtime defaults' masked and read-only paths are neither writable nor readable.
 */

const READ_ONLY = [
  '/proc/sys',
  '/proc/sys/kernel/core_pattern',
  '/proc/sysrq-trigger',
  '/proc/irq',
  '/proc/bus',
  '/proc/fs',
];
const MASKED_FILES = [
  '/proc/interrupts',
  '/proc/kcore',
  '/proc/keys',
  '/proc/latency_stats',
  '/proc/sched_debug',
  '/proc/timer_list',
  '/proc/timer_stats',
];
const MASKED_DIRS = [
  '/proc/acpi',
  '/proc/asound',
  '/proc/scsi',
  '/sys/firmware',
  '/sys/devices/virtual/powercap',
];

/**
 * Without user namespaces (e2e-landlock), what docs/security.md "Landlock backend" lists: no
 * private /proc, so the kernel files bwrap masks open where the uid may read them; and access(2)
 * (`test -w`) is not Landlock's to answer. A write that lands (WROTE) is never among them.
 */
function beyondLandlock(line: string): boolean {
  if (!NO_USER_NAMESPACES) return false;
  const [finding, path] = line.split(' ');
  if (finding === 'WRITABLE') return true;
  return (
    (finding === 'READ' || finding === 'LISTED') && [...MASKED_FILES, ...MASKED_DIRS].includes(path ?? '')
  );
}

/** Sysctls that matter most to a root broker's host: each gets its own current value written back. */
const WRITTEN_BACK = [
  'kernel/core_pattern',
  'kernel/modprobe',
  'kernel/panic',
  'kernel/randomize_va_space',
  'kernel/unprivileged_bpf_disabled',
  'kernel/yama/ptrace_scope',
  'fs/protected_symlinks',
  'fs/suid_dumpable',
  'vm/overcommit_memory',
  'vm/swappiness',
];

/**
 * Prints a line for every write that lands and every masked path that opens; `checked N` at the end.
 * Values are read whole (`cat`: dash's `read` takes a byte at a time, and a sysctl answers only its
 * first byte that way, so writing that back would change it) and written back only when they are
 * one line; nothing is written once the canary's write has landed. `sweep` writes every entry back;
 * otherwise every entry is asked `test -w` (the kernel's own answer, EROFS on a read-only mount)
 * and the listed ones are written back.
 */
function script(sweep: boolean): string {
  return `
nl='
'
writeback() { v=$(cat "$1" 2>/dev/null) || return 0; case "$v" in *"$nl"*|'') return 0;; esac
  printf '%s\\n' "$v" 2>/dev/null > "$1" && echo "WROTE $1"; return 0; }
canary=/proc/sys/kernel/core_pattern
[ -n "$(cat $canary)" ] || { echo "UNREADABLE $canary"; exit 3; }
if printf '%s\\n' "$(cat $canary)" 2>/dev/null > $canary; then echo "WROTE $canary"; exit 0; fi
n=0
for f in $(find /proc/sys -type f 2>/dev/null); do
  n=$((n+1))
  [ -w "$f" ] && echo "WRITABLE $f"
  ${sweep ? '' : ': '}writeback "$f"
done
for f in ${WRITTEN_BACK.map((name) => `/proc/sys/${name}`).join(' ')}; do [ -e "$f" ] && writeback "$f"; done
for p in ${[...READ_ONLY, ...MASKED_FILES, ...MASKED_DIRS].join(' ')} /proc/irq/*/smp_affinity; do
  [ -e "$p" ] && [ -w "$p" ] && echo "WRITABLE $p"
done
for p in ${MASKED_FILES.join(' ')}; do [ -e "$p" ] && cat "$p" >/dev/null 2>&1 && echo "READ $p"; done
for d in ${MASKED_DIRS.join(' ')}; do [ -e "$d" ] && ls "$d" >/dev/null 2>&1 && echo "LISTED $d"; done
echo "checked $n"
`;
}

let base: string;

beforeAll(async () => {
  ensureBuilt();
  base = await mkdtemp('/tmp/fs-sandbox-host-privileges-');
  await chmod(base, 0o755);
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

const minimalRead = { path: { type: 'special', value: { kind: 'minimal' } }, access: 'read' };
const rootRead = { path: { type: 'special', value: { kind: 'root' } }, access: 'read' };

type Profile = 'workspace' | 'whole disk';

function readOrNull(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

function context(ws: string, profile: Profile): unknown {
  const entries = [
    profile === 'workspace' ? minimalRead : rootRead,
    { path: { type: 'path', path: `file://${ws}` }, access: 'write' },
  ];
  return {
    permissions: { type: 'managed', file_system: { type: 'restricted', entries }, network: 'restricted' },
    cwd: `file://${ws}`,
    windowsSandboxLevel: 'disabled',
  };
}

describe.each(USERS)('as %s', (user: CliUser) => {
  let ws: string;
  let shell: SandboxShell;

  beforeAll(async () => {
    ws = join(base, user);
    await mkdir(ws);
    if (user === 'nobody') await lchown(ws, NOBODY_UID, NOBODY_UID);
    shell = new SandboxShell(user, { PATH: '/usr/bin:/bin' });
  });

  afterAll(async () => {
    await shell.stop();
  });

  async function attempt(channel: Channel, profile: Profile, sweep: boolean): Promise<void> {
    const before = WRITTEN_BACK.map((name) => readOrNull(`/proc/sys/${name}`));
    const done = await shell.run(channel, script(sweep), {
      context: context(ws, profile),
      cwd: ws,
      scriptDir: ws,
    });
    expect(done.stdout).not.toMatch(/UNREADABLE/);
    const findings = done.stdout
      .split('\n')
      .filter((line) => /^(WROTE|WRITABLE|READ|LISTED) /.test(line) && !beyondLandlock(line));
    expect(findings).toEqual([]);
    // Every entry was looked at (not a script that stopped early), and the host kept its values.
    expect(Number(/checked (\d+)/.exec(done.stdout)?.[1])).toBeGreaterThan(300);
    expect(WRITTEN_BACK.map((name) => readOrNull(`/proc/sys/${name}`))).toEqual(before);
  }

  describe.each(['workspace', 'whole disk'] as const)('with the %s readable', (profile) => {
    it.each(CHANNELS)('through %s: no sysctl takes a write, masked paths stay closed', async (channel) => {
      await attempt(channel, profile, false);
    });
  });

  it('through run: every single-line sysctl written back with its own value is refused', async () => {
    await attempt('run', 'whole disk', true);
  });
});
