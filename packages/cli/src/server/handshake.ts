import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { homedir, tmpdir, userInfo } from 'node:os';
import { basename, isAbsolute } from 'node:path';
import { currentHostOs, FsError, type HostOs, nativeToPathUri, type WireResultOf } from '@fs-sandbox/policy';
import packageJson from '../../package.json' with { type: 'json' };

type InitializeResult = WireResultOf<'initialize'>;
export type EnvironmentInfo = InitializeResult['environmentInfo'];

/**
 * Per-connection handshake, as the Codex exec-server does it: `initialize` once, then the `initialized`
 * notification, and only then filesystem and process methods. The error texts are the reference's, so clients
 * that match on them keep working.
 */
export type HandshakeState = 'new' | 'initializing' | 'ready';

export function handshakeError(state: HandshakeState): FsError | null {
  if (state === 'new')
    return new FsError('invalid_request', 'client must call initialize before using filesystem methods');
  if (state === 'initializing') {
    return new FsError('invalid_request', 'client must send initialized before using filesystem methods');
  }
  return null;
}

export function repeatedInitializeError(): FsError {
  return new FsError('invalid_request', 'initialize may only be sent once per connection');
}

/**
 * Only facts this process really has: the shell it runs commands with, nothing about providers.
 * `cwd` is the server's working directory: its own, or the cwd of the policy it was given.
 */
export function describeEnvironment(cwd: string = process.cwd()): EnvironmentInfo {
  const os = currentHostOs();
  const temp = nativeToPathUri(tmpdir(), os);
  return {
    shell: shellOf(process.env.SHELL, os),
    executor: 'fs-sandbox',
    executorVersion: packageJson.version,
    cwd: nativeToPathUri(cwd, os),
    userHomeDir: nativeToPathUri(homedir(), os),
    platformOs: os,
    temporaryDirectories: [temp],
    tempDir: temp,
    capabilities: {
      sandboxedFileStreaming: true,
      fileWriteStreaming: true,
      writeFileModes: true,
      errorKinds: true,
      processes: true,
      processTty: true,
    },
  };
}

/**
 * The shell commands are wrapped in, found as the reference finds it: the user's login shell from
 * the password database, else `SHELL`, each only when it names an existing absolute program, else
 * the platform's standard one.
 */
export function shellOf(shell: string | undefined, os: HostOs): EnvironmentInfo['shell'] {
  if (os === 'windows') return { name: 'powershell', path: 'powershell.exe' };
  const usable = (path: string | null | undefined): path is string =>
    typeof path === 'string' && isAbsolute(path) && existsSync(path);
  const path = [loginShell(), shell].find(usable) ?? '/bin/sh';
  return { name: basename(path), path };
}

function loginShell(): string | null {
  try {
    return userInfo().shell;
  } catch {
    // No password entry for this uid (a container's arbitrary user).
    return null;
  }
}

export function initializeResult(environment: EnvironmentInfo): InitializeResult {
  return { sessionId: randomUUID(), environmentInfo: environment };
}
