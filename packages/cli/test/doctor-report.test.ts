import { APP_SERVER_METHODS } from '@fs-sandbox/policy';
import { describe, expect, it } from 'vitest';
import { appServerSurfaceCheck, formatChecks, namespaceRemedy } from '../src/cli/doctor-command.js';
import { formatTable, wrapText } from '../src/cli/table.js';

describe('doctor report', () => {
  it('lists the V2 app-server surface: every method, its notifications, and whether a terminal is given', () => {
    const withBun = formatChecks([appServerSurfaceCheck('linux', 'bun')]);
    for (const method of APP_SERVER_METHODS) expect(withBun.replaceAll(/\s+/g, ' ')).toContain(method);
    for (const notification of [
      'fs/changed',
      'process/outputDelta',
      'process/exited',
      'command/exec/outputDelta',
    ])
      expect(withBun).toContain(notification);
    expect(withBun).toContain('tty: true runs on a terminal inside the sandbox');
    expect(formatChecks([appServerSurfaceCheck('linux', 'node')])).toContain('tty: true is refused');
    expect(formatChecks([appServerSurfaceCheck('macos', 'bun')])).toContain('fs/watch is Linux only');
  });

  it('prints a failing check with a long detail within 100 columns, its remedy on a fix: line', () => {
    const detail = `fs-sandbox: bubblewrap (bwrap) was not found or is not executable (${'/very/long/path'.repeat(12)}); install bubblewrap to run sandboxed file operations [sandbox_unavailable]`;
    const report = formatChecks([
      { name: 'os', status: 'info', detail: 'linux' },
      {
        name: 'backend',
        status: 'FAIL',
        detail,
        remedy:
          'apt-get install -y bubblewrap (Debian/Ubuntu), or point FS_SANDBOX_BWRAP=/path/to/bwrap at a bwrap outside every writable root',
      },
      { name: 'sandboxed operation', status: 'ok', detail: 'fine', remedy: 'never shown for a pass' },
    ]);
    const lines = report.split('\n');
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(100);
    // Continuation lines sit under the detail column; nothing of the detail is lost.
    const column = lines[0]?.indexOf('detail') ?? -1;
    const body = lines.slice(2);
    for (const line of body.filter((text) => text.startsWith(' '))) {
      expect(line.slice(0, column).trim()).toBe('');
    }
    const joined = body.map((line) => line.slice(column)).join('');
    expect(joined.replaceAll(' ', '')).toContain(detail.replaceAll(' ', ''));
    expect(report).toMatch(/^ +fix: apt-get install -y bubblewrap /m);
    expect(report).toContain('FS_SANDBOX_BWRAP=/path/to/bwrap');
    expect(report).not.toContain('never shown');
  });

  it('prints a warning with its remedy on a fix: line', () => {
    const report = formatChecks([
      {
        name: 'helper runtime',
        status: 'WARN',
        detail: 'node /usr/bin/node (node, because the Bun helper failed its self-check)',
        remedy: 'install @fs-sandbox/helper-linux-x64',
      },
    ]);
    expect(report).toMatch(/^helper runtime +WARN +node /m);
    expect(report).toMatch(/^ +fix: install @fs-sandbox\/helper-linux-x64$/m);
  });

  it('names the sysctl that forbids user namespaces on this kernel', async () => {
    const knobs = (values: Record<string, string>) => async (name: string) => values[name] ?? null;
    expect(await namespaceRemedy(knobs({ 'kernel.unprivileged_userns_clone': '0' }))).toMatch(
      /^sysctl -w kernel\.unprivileged_userns_clone=1 .*FS_SANDBOX_BWRAP=\/path\/to\/bwrap/,
    );
    expect(await namespaceRemedy(knobs({ 'kernel.apparmor_restrict_unprivileged_userns': '1' }))).toMatch(
      /^sysctl -w kernel\.apparmor_restrict_unprivileged_userns=0 /,
    );
    expect(await namespaceRemedy(knobs({ 'user.max_user_namespaces': '0' }))).toMatch(
      /^sysctl -w user\.max_user_namespaces=15000 /,
    );
    expect(
      await namespaceRemedy(
        knobs({
          'kernel.unprivileged_userns_clone': '1',
          'kernel.apparmor_restrict_unprivileged_userns': '0',
        }),
      ),
    ).toMatch(/^no kernel knob forbids user namespaces here.*FS_SANDBOX_BWRAP=\/path\/to\/bwrap$/);
  });

  it('wraps words and cuts a word longer than the line', () => {
    expect(wrapText('aa bb cc', 5)).toEqual(['aa bb', 'cc']);
    expect(wrapText('abcdefgh', 3)).toEqual(['abc', 'def', 'gh']);
    expect(formatTable(['a', 'b'], [['x', 'one two three']], 24)).toBe(
      'a  b\n-  -------------\nx  one two three',
    );
  });
});
