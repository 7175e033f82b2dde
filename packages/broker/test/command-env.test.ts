import { describe, expect, it } from 'vitest';
import { commandEnv, matchesName } from '../src/runner/command-env.js';

/** A command's environment from the broker's, the request's `env` and its `envPolicy`. */

const BROKER = {
  PATH: '/usr/bin:/bin',
  TMPDIR: '/tmp/x',
  HOME: '/root',
  OPENAI_API_KEY: 'sk-secret',
  NODE_OPTIONS: '--require /evil.js',
  LD_PRELOAD: '/evil.so',
  UNSET: undefined,
};

const policy = (over: Partial<Parameters<typeof commandEnv>[1] & object> = {}) => ({
  inherit: 'all' as const,
  ignoreDefaultExcludes: false,
  exclude: [],
  set: {},
  includeOnly: [],
  ...over,
});

describe('commandEnv', () => {
  it('without a policy gives exactly the request env, nothing of the broker', () => {
    expect(commandEnv(BROKER, null, { A: '1' }, 'linux')).toEqual({ A: '1' });
    expect(commandEnv(BROKER, undefined, {}, 'linux')).toEqual({});
  });

  it('inherits only the allowlist, for all and core alike: never keys, loader or HOME variables', () => {
    for (const inherit of ['all', 'core'] as const) {
      expect(commandEnv(BROKER, policy({ inherit }), {}, 'linux')).toEqual({
        PATH: '/usr/bin:/bin',
        TMPDIR: '/tmp/x',
      });
    }
    expect(commandEnv(BROKER, policy({ inherit: 'none' }), {}, 'linux')).toEqual({});
  });

  it('excludes apply to what is inherited; set comes after them, so a variable set by name is kept', () => {
    const set = { GITHUB_TOKEN: 't', PLAIN: 'p' };
    expect(commandEnv(BROKER, policy({ inherit: 'none', set }), {}, 'linux')).toEqual(set);
    expect(commandEnv(BROKER, policy({ exclude: ['*tmp*'], set }), {}, 'linux')).toEqual({
      PATH: '/usr/bin:/bin',
      ...set,
    });
  });

  it('applies exclude patterns, then set, then narrows to includeOnly; the request env goes on top', () => {
    expect(commandEnv(BROKER, policy({ exclude: ['TMP*'] }), {}, 'linux')).toEqual({ PATH: '/usr/bin:/bin' });
    expect(
      commandEnv(
        BROKER,
        policy({ set: { EXTRA: 'e', PATH: '/opt/bin' }, includeOnly: ['PA?H', 'EXTRA'] }),
        {},
        'linux',
      ),
    ).toEqual({ PATH: '/opt/bin', EXTRA: 'e' });
    // `env` is the caller's own: neither excludes nor includeOnly narrow it, as in the reference.
    expect(
      commandEnv(BROKER, policy({ includeOnly: ['PATH'] }), { API_TOKEN: 'given', PATH: '/mine' }, 'linux'),
    ).toEqual({ PATH: '/mine', API_TOKEN: 'given' });
  });

  it('matches names case-insensitively with * and ?, everything else literally', () => {
    expect(matchesName('*key*', 'OPENAI_API_KEY')).toBe(true);
    expect(matchesName('PA?H', 'PATH')).toBe(true);
    expect(matchesName('PA?H', 'PAATH')).toBe(false);
    expect(matchesName('A.B', 'AXB')).toBe(false);
    expect(matchesName('A+(B', 'A+(B')).toBe(true);
    expect(matchesName('PATH', 'PATH_INJECTION')).toBe(false);
  });
});
