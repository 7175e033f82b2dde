import { describe, expect, it } from 'vitest';
import { filterHelperEnv } from '../src/env-allowlist.js';

const hostile = {
  PATH: '/usr/bin:/bin',
  TMPDIR: '/tmp/t',
  TMP: '/tmp/a',
  TEMP: '/tmp/b',
  HOME: '/root',
  OPENAI_API_KEY: 'sk-secret',
  HTTPS_PROXY: 'http://proxy:3128',
  NODE_OPTIONS: '--require /tmp/evil.js',
  // Bun's own: extra flags (a preload), its config and install settings.
  BUN_OPTIONS: '--preload=/tmp/evil.js',
  BUN_CONFIG_REGISTRY: 'http://evil/',
  BUN_INSTALL: '/tmp/evil',
  LD_PRELOAD: '/tmp/evil.so',
  BASH_ENV: '/tmp/evil.sh',
  PATH_INJECTION: 'x',
  __CF_USER_TEXT_ENCODING: '0x1F5:0x0:0x0',
  UNSET: undefined,
};

describe('filterHelperEnv', () => {
  it('keeps only PATH TMPDIR TMP TEMP on linux', () => {
    expect(filterHelperEnv(hostile, 'linux')).toEqual({
      PATH: '/usr/bin:/bin',
      TMPDIR: '/tmp/t',
      TMP: '/tmp/a',
      TEMP: '/tmp/b',
    });
  });
  it('adds __CF_USER_TEXT_ENCODING on macOS', () => {
    expect(filterHelperEnv(hostile, 'macos')).toEqual({
      PATH: '/usr/bin:/bin',
      TMPDIR: '/tmp/t',
      TMP: '/tmp/a',
      TEMP: '/tmp/b',
      __CF_USER_TEXT_ENCODING: '0x1F5:0x0:0x0',
    });
  });
  it('matches names case-insensitively on Windows, keeping the original spelling', () => {
    const env = {
      Path: 'C:\\Windows',
      Temp: 'C:\\T',
      tmp: 'C:\\t2',
      PATH_INJECTION: 'x',
      UserProfile: 'C:\\Users\\u',
    };
    expect(filterHelperEnv(env, 'windows')).toEqual({ Path: 'C:\\Windows', Temp: 'C:\\T', tmp: 'C:\\t2' });
  });
  it('is case-sensitive elsewhere and drops values with NUL', () => {
    expect(filterHelperEnv({ Path: '/x', PATH: '/bin\0/evil' }, 'linux')).toEqual({});
  });
});
