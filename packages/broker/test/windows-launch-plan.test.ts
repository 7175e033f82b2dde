import type { FsError, SandboxPlan, WindowsSandboxLevel } from '@fs-sandbox/policy';
import { describe, expect, it } from 'vitest';
import type { HelperRuntime } from '../src/backends/backend.js';
import { launchCommand } from '../src/backends/launch-command.js';
import {
  buildWindowsLaunchPlan,
  buildWindowsLaunchPlanData,
} from '../src/backends/windows/windows-launch-plan.js';
import {
  MAX_COMMAND_LINE_CHARS,
  parseHelperCommand,
  parseWindowsLaunchPlan,
} from '../src/backends/windows/windows-launch-protocol.js';
import { windowsLauncherScriptPath } from '../src/backends/windows/windows-launcher-path.js';
import { acceptWindowsPlan } from '../src/backends/windows/windows-level.js';
import { emptyPlan } from './support/plans.js';

/** Why `level` refuses the plan (always as sandbox_unavailable), or null when it accepts it. */
function windowsLevelRefusal(p: SandboxPlan, level: WindowsSandboxLevel): string | null {
  try {
    acceptWindowsPlan(p, level);
    return null;
  } catch (error) {
    expect(error).toMatchObject({ kind: 'sandbox_unavailable' });
    return (error as FsError).message;
  }
}

const RUNTIME: HelperRuntime = {
  executable: { kind: 'node', path: 'C:\\Program Files\\nodejs\\node.exe' },
  helperBundle: 'C:\\fs-sandbox\\packages\\helper\\dist\\helper.cjs',
  ripgrepPath: 'C:\\fs-sandbox\\node_modules\\@vscode\\ripgrep-win32-x64\\bin\\rg.exe',
  env: { Path: 'C:\\Windows\\system32', TEMP: 'C:\\Users\\dev\\AppData\\Local\\Temp' },
};
const LAUNCHER = 'C:\\fs-sandbox\\packages\\broker\\dist\\windows-launcher.js';

function plan(overrides: Partial<SandboxPlan>): SandboxPlan {
  return emptyPlan('windows', { fullDiskRead: true, cwd: 'C:\\Users\\dev\\work', ...overrides });
}

const WORKSPACE_WRITE = plan({
  writableRoots: [
    {
      root: 'C:\\Users\\dev\\work',
      readOnlySubpaths: ['C:\\Users\\dev\\work\\vendor\\locked'],
      protectedNames: ['.git', '.agents', '.codex'],
    },
  ],
});

describe('restricted-token level refusals', () => {
  it('refuses a policy with read restrictions at level restricted-token, naming the reason', () => {
    const refusal = windowsLevelRefusal(
      plan({ fullDiskRead: false, readableRoots: ['C:\\w'] }),
      'restricted-token',
    );
    expect(refusal).toContain('a write-restricted token cannot enforce read restrictions');
    expect(refusal).toContain('no full-disk read');
    const denied = windowsLevelRefusal(
      plan({ fullDiskRead: false, deniedPaths: ['C:\\w\\.env'], denyGlobs: ['C:\\w\\**\\*.pem'] }),
      'restricted-token',
    );
    expect(denied).toContain('denied paths: C:\\w\\.env');
    expect(denied).toContain('deny globs: C:\\w\\**\\*.pem');
  });

  it('refuses read restrictions at level elevated too, saying why', () => {
    expect(windowsLevelRefusal(plan({ fullDiskRead: false }), 'elevated')).toMatch(
      /cannot enforce read restrictions.*elevated setup, which this broker does not provision/,
    );
  });

  it('refuses every restricted plan at levels disabled and mxc', () => {
    expect(windowsLevelRefusal(WORKSPACE_WRITE, 'disabled')).toMatch(/`disabled`.*never run unsandboxed/);
    expect(windowsLevelRefusal(WORKSPACE_WRITE, 'mxc')).toMatch(/`mxc` is not supported/);
  });

  it('accepts a full-read plan with write restrictions at both token levels', () => {
    expect(windowsLevelRefusal(WORKSPACE_WRITE, 'restricted-token')).toBeNull();
    expect(windowsLevelRefusal(WORKSPACE_WRITE, 'elevated')).toBeNull();
  });
});

describe('restricted-token launch plan', () => {
  it('workspace-write: write-restricted token, per-run capability SID, grants and deny ACEs', async () => {
    const data = buildWindowsLaunchPlanData(acceptWindowsPlan(WORKSPACE_WRITE, 'restricted-token'), RUNTIME);
    await expect(`${JSON.stringify(data, null, 2)}\n`).toMatchFileSnapshot(
      './golden/windows-workspace-write.plan.json',
    );
    expect(data.tokenFlags).toEqual(['DISABLE_MAX_PRIVILEGE', 'LUA_TOKEN', 'WRITE_RESTRICTED']);
    expect(data.restrictingSids).toEqual(['per-run-capability', 'logon-session']);
    expect(data.grants).toEqual([
      {
        path: 'C:\\Users\\dev\\work',
        access: 'modify',
        inheritance: 'subtree',
        whenMissing: 'skip',
        reason: 'writable root',
      },
    ]);
    expect(data.denies.map((d) => [d.path, d.access, d.inheritance, d.whenMissing])).toEqual([
      ['C:\\Users\\dev\\work\\vendor\\locked', 'write', 'subtree', 'refuse'],
      ['C:\\Users\\dev\\work\\.git', 'write', 'subtree', 'skip'],
      ['C:\\Users\\dev\\work\\.agents', 'write', 'subtree', 'skip'],
      ['C:\\Users\\dev\\work\\.codex', 'write', 'subtree', 'skip'],
      ['C:\\Users\\dev\\work', 'delete', 'none', 'skip'],
      ['C:\\Users\\dev\\work\\vendor', 'delete', 'none', 'skip'],
    ]);
    // The helper and the one ripgrep it may start.
    expect(data.job).toEqual({ killOnClose: true, activeProcessLimit: 2 });
  });

  it('read-only policy with full-disk read: no grants, so every write fails', () => {
    const data = buildWindowsLaunchPlanData(acceptWindowsPlan(plan({}), 'restricted-token'), RUNTIME);
    expect(data.grants).toEqual([]);
    expect(data.denies).toEqual([]);
    expect(data.tokenFlags).toContain('WRITE_RESTRICTED');
  });

  it('launches node on the launcher with the plan as one argument, then the helper command line', () => {
    const spec = buildWindowsLaunchPlan(acceptWindowsPlan(WORKSPACE_WRITE, 'elevated'), RUNTIME, LAUNCHER);
    expect(spec.backend).toBe('restricted-token');
    expect(spec.sandboxProgram).toBe(RUNTIME.executable.path);
    expect(spec.sandboxArgs[0]).toBe(LAUNCHER);
    expect(spec.sandboxArgs).toHaveLength(2);
    expect(parseWindowsLaunchPlan(spec.sandboxArgs[1])).toEqual(
      buildWindowsLaunchPlanData(acceptWindowsPlan(WORKSPACE_WRITE, 'elevated'), RUNTIME),
    );
    const { file, args } = launchCommand(spec);
    expect([file, ...args.slice(0, 2)]).toEqual([RUNTIME.executable.path, LAUNCHER, spec.sandboxArgs[1]]);
    // What the launcher starts under the token: its arguments after the plan.
    expect(parseHelperCommand(args.slice(2))).toEqual([RUNTIME.executable.path, RUNTIME.helperBundle]);
    expect([spec.mountPoints, spec.boundRoots]).toEqual([[], []]);
    expect(spec.env).toEqual(RUNTIME.env);
    expect(spec.details).toMatchObject({
      level: 'elevated',
      tokenFlags: ['DISABLE_MAX_PRIVILEGE', 'LUA_TOKEN', 'WRITE_RESTRICTED'],
      envNames: ['Path', 'TEMP'],
    });
    expect(spec.details).not.toHaveProperty('env');
  });

  it('refuses plan paths spelled as Windows aliases', () => {
    for (const root of ['C:\\Users\\dev\\WORK~1', '\\\\?\\C:\\w', 'C:\\w.', '\\\\server\\share\\w']) {
      const p = plan({ writableRoots: [{ root, readOnlySubpaths: [], protectedNames: [] }] });
      expect(
        () => buildWindowsLaunchPlanData(acceptWindowsPlan(p, 'restricted-token'), RUNTIME),
        root,
      ).toThrow(
        expect.objectContaining({
          kind: 'sandbox_unavailable',
          message: expect.stringContaining('writable root'),
        }),
      );
    }
    expect(() =>
      buildWindowsLaunchPlanData(acceptWindowsPlan(plan({}), 'elevated'), {
        ...RUNTIME,
        executable: { kind: 'node', path: 'C:\\PROGRA~1\\node.exe' },
      }),
    ).toThrow(/node executable/);
  });

  it('refuses a plan too large for a Windows command line', () => {
    const readOnlySubpaths = Array.from({ length: 400 }, (_, i) => `C:\\w\\${'deep\\'.repeat(10)}${i}`);
    const big = plan({ writableRoots: [{ root: 'C:\\w', readOnlySubpaths, protectedNames: [] }] });
    expect(() =>
      buildWindowsLaunchPlan(acceptWindowsPlan(big, 'restricted-token'), RUNTIME, LAUNCHER),
    ).toThrow(
      expect.objectContaining({
        kind: 'sandbox_unavailable',
        message: expect.stringContaining(String(MAX_COMMAND_LINE_CHARS)),
      }),
    );
  });

  it('finds the built launcher inside the broker package', () => {
    expect(windowsLauncherScriptPath().replaceAll('\\', '/')).toMatch(
      /packages\/broker\/dist\/windows-launcher\.js$/,
    );
  });
});

describe('launch plan parsing (the launcher side)', () => {
  const good = buildWindowsLaunchPlanData(acceptWindowsPlan(WORKSPACE_WRITE, 'restricted-token'), RUNTIME);
  const variant = (change: (p: Record<string, unknown>) => void) => {
    const copy = JSON.parse(JSON.stringify(good)) as Record<string, unknown>;
    change(copy);
    return JSON.stringify(copy);
  };

  it('refuses anything that would weaken the sandbox, as sandbox_unavailable', () => {
    for (const [label, text] of [
      ['missing', undefined],
      ['not json', '{'],
      ['version', variant((p) => Object.assign(p, { version: 2 }))],
      ['no WRITE_RESTRICTED', variant((p) => Object.assign(p, { tokenFlags: ['DISABLE_MAX_PRIVILEGE'] }))],
      [
        'unknown flag',
        variant((p) => Object.assign(p, { tokenFlags: ['WRITE_RESTRICTED', 'SANDBOX_INERT'] })),
      ],
      ['no capability SID', variant((p) => Object.assign(p, { restrictingSids: ['logon-session'] }))],
      ['bad ACL edit', variant((p) => Object.assign(p, { grants: [{ path: 'C:\\w', access: 'full' }] }))],
      [
        'no job limit',
        variant((p) => Object.assign(p, { job: { killOnClose: false, activeProcessLimit: 1 } })),
      ],
      ['env', variant((p) => Object.assign(p, { env: { A: 1 } }))],
    ] as const) {
      expect(() => parseWindowsLaunchPlan(text), label).toThrow(
        expect.objectContaining({
          kind: 'sandbox_unavailable',
          message: expect.stringContaining('malformed plan'),
        }),
      );
    }
  });

  it('accepts the plan the broker builds', () => {
    expect(parseWindowsLaunchPlan(JSON.stringify(good))).toEqual(good);
  });

  it('refuses to start the helper without node and the bundle after the plan', () => {
    for (const command of [[], ['node.exe'], ['node.exe', '']]) {
      expect(() => parseHelperCommand(command), JSON.stringify(command)).toThrow(
        expect.objectContaining({
          kind: 'sandbox_unavailable',
          message: expect.stringContaining('no helper command line'),
        }),
      );
    }
  });
});
