import { randomUUID } from 'node:crypto';
import { homedir, tmpdir } from 'node:os';
import { currentHostOs, FsError, nativeToPathUri, type WireResultOf } from '@fs-sandbox/policy';
import packageJson from '../../package.json' with { type: 'json' };

type InitializeResult = WireResultOf<'initialize'>;
export type EnvironmentInfo = InitializeResult['environmentInfo'];

/**
 * Per-connection handshake, as the Codex exec-server does it: `initialize` once, then the `initialized`
 * notification, and only then filesystem methods. The error texts are the reference's, so clients
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

/** Only facts this process really has; nothing about shells or providers it does not use. */
export function describeEnvironment(): EnvironmentInfo {
  const os = currentHostOs();
  const temp = nativeToPathUri(tmpdir(), os);
  return {
    executor: 'fs-sandbox',
    executorVersion: packageJson.version,
    cwd: nativeToPathUri(process.cwd(), os),
    userHomeDir: nativeToPathUri(homedir(), os),
    platformOs: os,
    temporaryDirectories: [temp],
    tempDir: temp,
    capabilities: {
      sandboxedFileStreaming: true,
      fileWriteStreaming: true,
      writeFileModes: true,
      errorKinds: true,
    },
  };
}

export function initializeResult(environment: EnvironmentInfo): InitializeResult {
  return { sessionId: randomUUID(), environmentInfo: environment };
}
