import { execFile } from 'node:child_process';
import { realpath } from 'node:fs/promises';
import { helperBundlePath } from '@fs-sandbox/helper';
import { FsError, LANDLOCK_MIN_ABI } from '@fs-sandbox/policy/core';
import { locateBwrap } from './bwrap-locate.js';
import { probeBwrap } from './bwrap-probe.js';

/**
 * Which Linux backend runs the sandboxes: bwrap (namespaces: a private /, /proc, /tmp, pid and
 * network namespace) where it can make its namespaces, else Landlock (no privilege and no
 * namespace needed; docs/security.md "Landlock backend" lists what that cannot do). `auto` tries
 * bwrap for real once per process and says why it was not taken; `bwrap` and `landlock` are
 * taken or refused, never switched.
 */
export type LinuxBackendPreference = 'auto' | 'bwrap' | 'landlock';
export const LINUX_BACKEND_CHOICES: readonly LinuxBackendPreference[] = ['auto', 'bwrap', 'landlock'];
export const LINUX_BACKEND_ENV = 'FS_SANDBOX_BACKEND';

export interface LinuxBackendChoice {
  backend: 'bwrap' | 'landlock';
  /** Why this one, in a sentence (doctor, explain). */
  reason: string;
  /**
   * `auto` took bwrap without its probe (`probe: 'deferred'`): the first launch under it is the
   * probe, and the broker runs the real one if that launch fails (core/deferred-probes.ts).
   */
  unchecked?: true;
}

/** The preference: the option, else FS_SANDBOX_BACKEND, else `auto`; anything else is refused. */
export function requestedLinuxBackend(
  option: LinuxBackendPreference | undefined,
  env: Record<string, string | undefined>,
): LinuxBackendPreference {
  const raw = option ?? env[LINUX_BACKEND_ENV] ?? 'auto';
  if ((LINUX_BACKEND_CHOICES as readonly string[]).includes(raw)) return raw as LinuxBackendPreference;
  throw new FsError(
    'invalid_params',
    `unknown backend \`${raw}\` (expected one of ${LINUX_BACKEND_CHOICES.join(', ')})`,
  );
}

const PROBE_TIMEOUT_MS = 10_000;

/** What the kernel offers Landlock: its ABI version, or why there is none. */
export interface LandlockSupport {
  abi: number | null;
  detail: string;
}

let landlockProbe: Promise<LandlockSupport> | undefined;

/**
 * The Landlock ABI, asked by the launcher itself (landlock_create_ruleset's version query), once
 * per process: the launcher is the compiled Bun helper, so without it there is no backend either.
 */
export function probeLandlock(): Promise<LandlockSupport> {
  landlockProbe ??= (async (): Promise<LandlockSupport> => {
    let launcher: string;
    try {
      launcher = landlockLauncherPath();
    } catch (error) {
      return { abi: null, detail: (error as Error).message };
    }
    return new Promise((resolve) => {
      execFile(
        launcher,
        ['--landlock', '--abi'],
        { env: {}, timeout: PROBE_TIMEOUT_MS, encoding: 'utf8' },
        (error, stdout, stderr) => {
          const abi = Number(stdout.trim());
          if (error === null && Number.isInteger(abi) && abi > 0) {
            resolve({ abi, detail: `Landlock ABI ${abi}` });
          } else {
            resolve({
              abi: null,
              detail: `Landlock is not available: ${(stdout + stderr).trim() || error?.message}`,
            });
          }
        },
      );
    });
  })();
  return landlockProbe;
}

/**
 * The launcher: the compiled Bun helper's `--landlock` mode (helper landlock-launcher.ts), the
 * built one whatever FS_SANDBOX_HELPER_BUNDLE says (that names the helper program of one runtime).
 */
export function landlockLauncherPath(): string {
  try {
    return helperBundlePath({}, 'bun');
  } catch {
    throw new FsError(
      'sandbox_unavailable',
      'the Landlock launcher is the compiled Bun helper, and it is not built for this platform',
      { kind: 'sandboxUnavailable' },
    );
  }
}

const choices = new Map<string, Promise<LinuxBackendChoice>>();
/** The keys of `choices` for which an unchecked bwrap was taken while no decision was kept. */
const uncheckedTaken = new Set<string>();

function choiceKey(preference: LinuxBackendPreference, env: Record<string, string | undefined>): string {
  return `${preference}:${env.FS_SANDBOX_BWRAP ?? ''}`;
}

/**
 * The backend for a preference, decided once per process and preference (the bwrap probe runs a
 * real sandbox: ~20 ms). A failed `auto` (neither works) is not cached, so a later call may find a
 * fixed machine. With `probe: 'deferred'`, `auto` takes an installed bwrap unprobed (unless the
 * probe has already run in this process): the caller must prove it by a launch, and call again with
 * `now` if that launch fails.
 */
export async function chooseLinuxBackend(
  preference: LinuxBackendPreference,
  env: Record<string, string | undefined>,
  probe: 'now' | 'deferred' = 'now',
): Promise<LinuxBackendChoice> {
  const key = choiceKey(preference, env);
  let choice = choices.get(key);
  if (choice === undefined && probe === 'deferred' && preference === 'auto') {
    try {
      await locateBwrap(env);
      uncheckedTaken.add(key);
      return { backend: 'bwrap', reason: 'bwrap (its first launch proves its namespaces)', unchecked: true };
    } catch {
      // Not installed: decided now (Landlock, or a refusal).
    }
  }
  if (choice === undefined) {
    choice = decide(preference, env);
    choice.catch(() => choices.delete(key));
    choices.set(key, choice);
  }
  return await choice;
}

/**
 * Runs the probe an unchecked `auto` skipped (see chooseLinuxBackend): true when it takes Landlock,
 * or neither (that refusal is then what a retry meets), instead of the bwrap that was taken.
 */
export async function settleLinuxBackend(
  preference: LinuxBackendPreference,
  env: Record<string, string | undefined>,
): Promise<boolean> {
  if (!uncheckedTaken.has(choiceKey(preference, env))) return false;
  try {
    return (await chooseLinuxBackend(preference, env)).backend !== 'bwrap';
  } catch {
    return true;
  }
}

/**
 * A launch under an unchecked bwrap (see chooseLinuxBackend) made its namespaces: that is the
 * probe's answer, kept for the process as the probe's would be.
 */
export function bwrapProven(env: Record<string, string | undefined>): void {
  const key = choiceKey('auto', env);
  if (uncheckedTaken.has(key) && !choices.has(key)) {
    choices.set(key, Promise.resolve({ backend: 'bwrap', reason: 'bwrap made its namespaces' }));
  }
}

async function decide(
  preference: LinuxBackendPreference,
  env: Record<string, string | undefined>,
): Promise<LinuxBackendChoice> {
  if (preference === 'bwrap') return { backend: 'bwrap', reason: 'bwrap, as asked' };
  if (preference === 'landlock') {
    await usableLandlock('Landlock was asked for');
    return { backend: 'landlock', reason: 'Landlock, as asked' };
  }
  let why: string;
  try {
    const bwrap = await locateBwrap(env);
    const probe = await probeBwrap(bwrap, await realpath(process.execPath));
    if (probe.namespaces.usable) return { backend: 'bwrap', reason: 'bwrap made its namespaces' };
    why = `bwrap could not make its namespaces (${oneLine(probe.namespaces.detail)})`;
  } catch (error) {
    why = `bwrap is not usable (${oneLine((error as Error).message)})`;
  }
  const support = await usableLandlock(why);
  return { backend: 'landlock', reason: `Landlock ABI ${support.abi}, because ${why}` };
}

async function usableLandlock(context: string): Promise<LandlockSupport> {
  const support = await probeLandlock();
  if (support.abi === null || support.abi < LANDLOCK_MIN_ABI) {
    throw new FsError(
      'sandbox_unavailable',
      `${context}, and ${support.abi === null ? support.detail : `the kernel's Landlock ABI is ${support.abi} (the backend needs ${LANDLOCK_MIN_ABI}: signal scoping)`}; refused rather than run unsandboxed`,
      { kind: 'sandboxUnavailable' },
    );
  }
  return support;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, 300);
}
