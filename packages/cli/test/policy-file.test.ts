import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { FsError, parseSandboxContext } from '@fs-sandbox/policy';
import { afterAll, describe, expect, it } from 'vitest';
import type { CliIo } from '../src/cli/cli-io.js';
import { type ContextFlags, resolveContext, withNetworkFlags } from '../src/cli/context-options.js';
import { POLICY_FILE_MAX_BYTES } from '../src/cli/policy-file.js';

/** Real files: the policy is read from the disk and its roots must exist. */
const SCRATCH = mkdtempSync(join(tmpdir(), 'fs-sandbox-policy-file-'));
const PROJECT = join(SCRATCH, 'project');
const DOCS = join(SCRATCH, 'docs');
for (const dir of [join(PROJECT, 'src'), DOCS]) mkdirSync(dir, { recursive: true });
afterAll(() => rmSync(SCRATCH, { recursive: true, force: true }));
const u = (path: string) => `file://${path}`;

const POLICY = join(PROJECT, 'fs-sandbox.toml');
writeFileSync(
  POLICY,
  `default_profile = "dev"

[profiles.dev]
writable_roots = ["."]
read_roots = ["../docs"]
deny = [".env", "**/*.pem"]
allow_domains = ["registry.npmjs.org"]
protect = [".vscode/tasks.json"]
allow_nested_repositories = ["vendor"]
unix_sockets = ["../run/agent.sock"]

[profiles.review]
sandbox_mode = "read-only"
read_roots = ["."]
`,
);

const io = (cwd = PROJECT): CliIo => ({
  stdout: new PassThrough(),
  stderr: new PassThrough(),
  stdin: Readable.from([]),
  env: {},
  cwd,
});

const flags = (extra: Partial<ContextFlags> = {}): ContextFlags => ({ writableRoot: [], deny: [], ...extra });

const resolve = (extra: Partial<ContextFlags>, cwd = PROJECT) =>
  resolveContext(flags(extra), io(cwd), 'linux', { sandboxByDefault: true, checkDirectories: true });

function entries(extra: Partial<ContextFlags>, cwd = PROJECT) {
  const { context } = resolve(extra, cwd);
  const parsed = parseSandboxContext(context);
  if (parsed?.permissions.type !== 'managed' || parsed.permissions.file_system.type !== 'restricted')
    throw new Error('not a restricted context');
  return {
    context: parsed,
    entries: parsed.permissions.file_system.entries,
    permissions: parsed.permissions,
  };
}

const path = (p: string, access: string) => ({ path: { type: 'path', path: u(p) }, access });

function refusal(extra: Partial<ContextFlags>, cwd = PROJECT): FsError {
  try {
    resolve(extra, cwd);
  } catch (error) {
    expect(error).toBeInstanceOf(FsError);
    expect((error as FsError).kind).toBe('invalid_params');
    return error as FsError;
  }
  throw new Error('resolved');
}

describe('a policy file profile as the context', () => {
  it('the default profile: its roots under the file, its denies, network and protected names', () => {
    const { context, entries: list, permissions } = entries({ policy: POLICY });
    expect(list).toEqual(
      expect.arrayContaining([
        path(PROJECT, 'write'),
        path(DOCS, 'read'),
        path(join(PROJECT, '.env'), 'deny'),
        { path: { type: 'glob_pattern', pattern: `${PROJECT}/**/*.pem` }, access: 'deny' },
      ]),
    );
    expect(permissions).toMatchObject({
      network: 'restricted',
      network_domains: { allow: ['registry.npmjs.org'], deny: [] },
      unix_sockets: [u(join(SCRATCH, 'run', 'agent.sock'))],
    });
    expect(context.executableSurface).toEqual({
      protect: ['.vscode/tasks.json'],
      allowNestedRepositories: [u(join(PROJECT, 'vendor'))],
    });
  });

  it('names each entry the file wrote with its line and key', () => {
    const { policy } = resolve({ policy: POLICY });
    expect(policy?.profile.name).toBe('dev');
    expect(policy?.sources.get(`${u(join(PROJECT, '.env'))}:deny`)).toEqual({
      file: POLICY,
      line: 6,
      key: 'profiles.dev.deny[0]',
    });
    expect(policy?.sources.get(`${PROJECT}/**/*.pem:deny`)?.key).toBe('profiles.dev.deny[1]');
    expect(policy?.sources.get(`${u(DOCS)}:read`)).toMatchObject({
      line: 5,
      key: 'profiles.dev.read_roots[0]',
    });
  });

  it('a read-only profile named by --profile, found by --find-policy from below the file', () => {
    const { entries: list } = entries({ findPolicy: true, profile: 'review' }, join(PROJECT, 'src'));
    expect(list).toContainEqual(path(PROJECT, 'read'));
    expect(list.some((entry) => entry.access === 'write')).toBe(false);
  });

  it('flags add to the profile and win', () => {
    const { entries: list } = entries({ policy: POLICY, readRoot: [SCRATCH], deny: ['src'] });
    expect(list).toEqual(expect.arrayContaining([path(SCRATCH, 'read'), path(join(PROJECT, 'src'), 'deny')]));
    const { context } = resolve({ policy: POLICY });
    // --network replaces the file's allowlist (the network flags are applied by run, why, explain).
    const enabled = parseSandboxContext(
      withNetworkFlags(context, { network: true, allowDomain: [], denyDomain: [] }),
    );
    expect(enabled?.permissions).toMatchObject({ network: 'enabled' });
    expect(enabled?.permissions).not.toHaveProperty('network_domains');
    // --network takes the file's sockets with it (no namespace to relay into); --allow-unix-socket
    // replaces them; --allow-domain keeps them.
    expect(enabled?.permissions).not.toHaveProperty('unix_sockets');
    const other = join(SCRATCH, 'other.sock');
    const flagged = withNetworkFlags(context, {
      network: false,
      allowDomain: [],
      denyDomain: [],
      allowUnixSocket: [other],
    });
    expect(flagged?.permissions).toMatchObject({ unix_sockets: [u(other)] });
    const domains = withNetworkFlags(context, {
      network: false,
      allowDomain: ['example.com'],
      denyDomain: [],
    });
    expect(domains?.permissions).toMatchObject({ unix_sockets: [u(join(SCRATCH, 'run', 'agent.sock'))] });
  });

  it('keeps --profile unambiguous: built-in names are the built-in profiles', () => {
    expect(refusal({ profile: 'dev' }).message).toMatch(
      /not a built-in profile .* needs --policy FILE or --find-policy/,
    );
    expect(refusal({ policy: POLICY, profile: 'read-only' }).message).toMatch(/is a built-in profile/);
    expect(refusal({ policy: POLICY, profile: 'nope' }).message).toBe(
      `${POLICY}: no profile "nope" (the file has: dev, review)`,
    );
    expect(refusal({ policy: POLICY, sandbox: false }).message).toMatch(/--no-sandbox cannot be combined/);
    expect(refusal({ policy: POLICY, findPolicy: true }).message).toMatch(/use one/);
    expect(refusal({ findPolicy: true }, SCRATCH).message).toMatch(
      /no fs-sandbox\.toml in .* or a directory above/,
    );
  });
});

describe('errors name the file, the line and the key', () => {
  const cases: [string, string, number, string | null, RegExp][] = [
    [
      'a typo',
      '[profiles.dev]\nwritable_roots = ["."]\nwriteable_roots = ["."]\n',
      3,
      'profiles.dev.writeable_roots',
      /unknown key \(sandbox_mode, writable_roots/,
    ],
    [
      'a typo at the top',
      'default_profil = "dev"\n',
      1,
      'default_profil',
      /unknown key \(default_profile, profiles are known\)/,
    ],
    [
      'a typo in an inline table',
      'profiles = { dev = { deny = ["x"],\n typo = 1 } }\n',
      2,
      'profiles.dev.typo',
      /unknown key/,
    ],
    [
      'a wrong type in an array',
      '[profiles.dev]\ndeny = [\n  ".env",\n  3,\n]\n',
      4,
      'profiles.dev.deny[1]',
      /expected string/,
    ],
    [
      'a built-in name',
      '[profiles.read-only]\n',
      1,
      'profiles.read-only',
      /may not be named read-only or workspace-write/,
    ],
    [
      'a read-only profile that writes',
      '[profiles.dev]\nsandbox_mode = "read-only"\nwritable_roots = ["."]\n',
      3,
      'profiles.dev.writable_roots',
      /writes nothing/,
    ],
    [
      'a host that is none',
      '[profiles.dev]\nallow_domains = ["a b"]\n',
      2,
      'profiles.dev.allow_domains[0]',
      /not a host name/,
    ],
    [
      'an unenforceable glob',
      '[profiles.dev]\ndeny = [\n "[x"]\n',
      3,
      'profiles.dev.deny[0]',
      /without a matching/,
    ],
    [
      'a protected path that climbs',
      'profiles.dev.protect = ["../x"]\n',
      1,
      'profiles.dev.protect[0]',
      /plain names/,
    ],
    [
      'a missing default profile',
      'default_profile = "x"\n[profiles.dev]\n',
      1,
      'default_profile',
      /no profile "x"/,
    ],
    [
      'a relayed socket beside the host network',
      '[profiles.dev]\nnetwork = true\nunix_sockets = ["/run/x.sock"]\n',
      3,
      'profiles.dev.unix_sockets',
      /own network/,
    ],
    [
      'a writable root that does not exist',
      '[profiles.dev]\nwritable_roots = [".", "missing"]\n',
      2,
      'profiles.dev.writable_roots[1]',
      /\/missing does not exist$/,
    ],
    [
      'a read root that is a file',
      '[profiles.dev]\nread_roots = [\n  "bad.toml",\n]\n',
      3,
      'profiles.dev.read_roots[0]',
      /\/bad\.toml is not a directory$/,
    ],
    ['a syntax error', '[profiles.dev]\ndeny = [".env"\n', 3, null, /./],
  ];
  it.each(cases)('%s', (_, text, line, key, message) => {
    const file = join(SCRATCH, 'bad.toml');
    writeFileSync(file, text);
    const error = refusal({ policy: file, profile: 'dev' });
    expect(
      error.message.startsWith(`${file}:${line}:${key === null ? '' : ` ${key}:`} `),
      error.message,
    ).toBe(true);
    expect(error.message).toMatch(message);
    expect(error.extra).toEqual({ policyFile: file, line, ...(key === null ? {} : { key }) });
  });

  it('a file too large to be a policy is refused before it is parsed', () => {
    const file = join(SCRATCH, 'large.toml');
    writeFileSync(file, `# ${'x'.repeat(POLICY_FILE_MAX_BYTES)}\n`);
    expect(refusal({ policy: file, profile: 'dev' }).message).toMatch(/larger than/);
  });
});

describe('--sandbox JSON with --read-root', () => {
  const sandbox = JSON.stringify({
    permissions: {
      type: 'managed',
      network: 'restricted',
      file_system: {
        type: 'restricted',
        entries: [{ path: { type: 'path', path: u(PROJECT) }, access: 'write' }],
      },
    },
    cwd: u(PROJECT),
  });

  it('adds a read entry for each root to the given context', () => {
    const { entries: list } = entries({ sandbox, readRoot: [DOCS] });
    expect(list).toEqual([path(PROJECT, 'write'), path(DOCS, 'read')]);
  });

  it('still refuses the other flags, and a context with nothing to add to', () => {
    expect(refusal({ sandbox, readRoot: [DOCS], writableRoot: [DOCS] }).message).toMatch(/but --read-root/);
    const unrestricted = JSON.stringify({
      permissions: { type: 'managed', file_system: { type: 'unrestricted' } },
    });
    expect(refusal({ sandbox: unrestricted, readRoot: [DOCS] }).message).toMatch(/restricted file_system/);
    expect(refusal({ sandbox: 'null', readRoot: [DOCS] }).message).toMatch(/needs a sandbox/);
  });
});
