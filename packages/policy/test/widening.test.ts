import { describe, expect, it } from 'vitest';
import { accessFor, rootOnlySecretLabel } from '../src/permissions/access.js';
import { rootOnlySecrets } from '../src/platform-roots.js';
import { runtimeReadOf, runtimeReadPaths, widenForHelperRuntime } from '../src/widening.js';
import { glob, pathEntry, restricted, special } from './support/contexts.js';

const runtime = {
  os: 'linux' as const,
  helperFiles: ['/opt/node/bin/node', '/opt/app/dist/helper.cjs'],
  minimalRootsPresent: ['/usr', '/etc', '/lib'],
};

describe('widenForHelperRuntime', () => {
  it('makes the exact helper files readable, not their folder or a sibling', () => {
    const widened = widenForHelperRuntime(restricted(pathEntry('file:///w', 'write')), runtime);
    expect(accessFor(widened, '/opt/app/dist/helper.cjs', 'linux').access).toBe('read');
    expect(accessFor(widened, '/opt/node/bin/node', 'linux').access).toBe('read');
    expect(accessFor(widened, '/opt/app/dist', 'linux').access).toBe('deny');
    expect(accessFor(widened, '/opt/app/dist/credentials.json', 'linux').access).toBe('deny');
    expect(accessFor(widened, '/opt/node/bin/npm', 'linux').access).toBe('deny');
  });
  it('adds the present runtime roots (the minimal ones without /etc) when the policy lacks full-disk read', () => {
    const widened = widenForHelperRuntime(restricted(pathEntry('file:///w', 'write')), runtime);
    expect(widened).toEqual(
      restricted(
        pathEntry('file:///w', 'write'),
        pathEntry('file:///usr', 'read'),
        pathEntry('file:///lib', 'read'),
        pathEntry('file:///opt/node/bin/node', 'read'),
        pathEntry('file:///opt/app/dist/helper.cjs', 'read'),
      ),
    );
  });
  it('names, for a path the policy leaves unmatched, the runtime read that shows it (the same list)', () => {
    const profile = restricted(
      pathEntry('file:///w', 'write'),
      pathEntry('file:///usr/share/secret', 'deny'),
    );
    expect(runtimeReadPaths(profile, runtime)).toEqual([
      '/usr',
      '/lib',
      '/opt/node/bin/node',
      '/opt/app/dist/helper.cjs',
    ]);
    expect(runtimeReadOf(profile, '/usr/bin/env', runtime)).toBe('/usr');
    expect(runtimeReadOf(profile, '/opt/app/dist/helper.cjs', runtime)).toBe('/opt/app/dist/helper.cjs');
    expect(runtimeReadOf(profile, '/etc/shadow', runtime)).toBeNull();
    expect(runtimeReadOf(profile, '/usr/share/secret/key', runtime)).toBeNull();
    expect(runtimeReadOf(profile, '/w/a', runtime)).toBeNull();
    const widened = widenForHelperRuntime(profile, runtime);
    for (const path of ['/usr/bin/env', '/etc/shadow', '/usr/share/secret/key', '/opt/app/dist/helper.cjs'])
      expect(accessFor(widened, path, 'linux').access === 'read').toBe(
        runtimeReadOf(profile, path, runtime) !== null,
      );
  });
  it('adds nothing under full-disk read but the masks of the root-only secrets', () => {
    const profile = restricted(special('root', 'read'), pathEntry('file:///w', 'write'));
    expect(widenForHelperRuntime(profile, runtime)).toEqual(
      restricted(
        special('root', 'read'),
        ...rootOnlySecrets('linux').map((secret) => pathEntry(`file://${secret.path}`, 'deny')),
        pathEntry('file:///w', 'write'),
      ),
    );
    // A whole-disk write is its owner's: nothing is carved out of it.
    const writes = restricted(special('root', 'write'), pathEntry('file:///w/.env', 'deny'));
    expect(widenForHelperRuntime(writes, runtime)).toEqual(writes);
    expect(accessFor(profile, '/etc/shadow', 'linux')).toMatchObject({
      access: 'deny',
      entry: rootOnlySecretLabel('root'),
    });
    expect(accessFor(writes, '/etc/shadow', 'linux').access).toBe('write');
  });
  it('expands minimal entries to the roots that exist', () => {
    const widened = widenForHelperRuntime(restricted(special('minimal', 'read')), {
      ...runtime,
      helperFiles: [],
    });
    expect(widened).toEqual(
      restricted(
        pathEntry('file:///usr', 'read'),
        pathEntry('file:///etc', 'read'),
        pathEntry('file:///lib', 'read'),
        ...rootOnlySecrets('linux').map((secret) => pathEntry(`file://${secret.path}`, 'deny')),
      ),
    );
  });
  it("keeps the root-only secrets out of minimal's grant, in the widening and in accessFor alike", () => {
    const cases: Array<[string, ReturnType<typeof restricted>, 'read' | 'deny']> = [
      ['minimal', restricted(special('minimal', 'read')), 'deny'],
      // A grant at or above the secret loses to the deeper carve-out while minimal is there…
      [
        'minimal and the file itself',
        restricted(special('minimal', 'read'), pathEntry('file:///etc/shadow', 'read')),
        'deny',
      ],
      ['minimal and /etc', restricted(special('minimal', 'read'), pathEntry('file:///etc', 'read')), 'deny'],
      // …and without minimal, /etc granted by its own entry is read whole, as asked.
      ['/etc alone', restricted(pathEntry('file:///etc', 'read')), 'read'],
    ];
    for (const [name, profile, expected] of cases) {
      const widened = widenForHelperRuntime(profile, { ...runtime, helperFiles: [] });
      for (const path of [
        '/etc/shadow',
        '/etc/gshadow',
        '/etc/ssh/ssh_host_ed25519_key',
        '/etc/ssl/private/k.pem',
      ]) {
        expect([name, path, accessFor(profile, path, 'linux').access]).toEqual([name, path, expected]);
        expect([name, path, accessFor(widened, path, 'linux').access]).toEqual([name, path, expected]);
      }
      for (const path of ['/etc/passwd', '/etc/ssh/ssh_config', '/etc/ssh/ssh_host_ed25519_key.pub']) {
        expect([name, path, accessFor(widened, path, 'linux').access]).toEqual([name, path, 'read']);
      }
    }
    expect(accessFor(restricted(special('minimal', 'read')), '/etc/shadow', 'linux').entry).toBe(
      rootOnlySecretLabel('minimal'),
    );
  });
  it('never weakens a deny', () => {
    const profile = restricted(
      pathEntry('file:///opt', 'deny'),
      pathEntry('file:///opt/node', 'read'),
      pathEntry('file:///etc', 'deny'),
      glob('/usr/**/secret*'),
    );
    const widened = widenForHelperRuntime(profile, runtime);
    expect(accessFor(widened, '/opt/app/dist/helper.cjs', 'linux').access).toBe('deny');
    expect(accessFor(widened, '/etc/passwd', 'linux').access).toBe('deny');
    expect(accessFor(widened, '/usr/share/secret.txt', 'linux').access).toBe('deny');
    expect(accessFor(widened, '/usr/bin/env', 'linux').access).toBe('read');
    for (const path of ['/opt', '/opt/app', '/etc']) {
      expect(accessFor(widened, path, 'linux')).toEqual(accessFor(profile, path, 'linux'));
    }
  });
  it('does not make a file inside a writable root read-only', () => {
    const profile = restricted(pathEntry('file:///opt/app', 'write'));
    const widened = widenForHelperRuntime(profile, runtime);
    expect(accessFor(widened, '/opt/app/dist/helper.cjs', 'linux').access).toBe('write');
  });
  it('leaves unrestricted, disabled and external profiles untouched', () => {
    for (const profile of [
      { type: 'disabled' as const },
      { type: 'external' as const },
      {
        type: 'managed' as const,
        file_system: { type: 'unrestricted' as const },
        network: 'restricted' as const,
      },
    ]) {
      expect(widenForHelperRuntime(profile, runtime)).toBe(profile);
    }
  });
  it('works with Windows paths', () => {
    const widened = widenForHelperRuntime(restricted(pathEntry('file:///C:/w', 'write')), {
      os: 'windows',
      helperFiles: ['C:\\Program Files\\nodejs\\node.exe', 'C:\\app\\helper.cjs'],
      minimalRootsPresent: ['C:\\Windows', 'C:\\Program Files'],
    });
    expect(accessFor(widened, 'C:\\app\\helper.cjs', 'windows').access).toBe('read');
    expect(accessFor(widened, 'C:\\app\\credentials.json', 'windows').access).toBe('deny');
    expect(
      widened.type === 'managed' && widened.file_system.type === 'restricted' && widened.file_system.entries,
    ).toEqual([
      pathEntry('file:///C:/w', 'write'),
      pathEntry('file:///C:/Windows', 'read'),
      pathEntry('file:///C:/Program%20Files', 'read'),
      pathEntry('file:///C:/app/helper.cjs', 'read'),
    ]);
  });
});
