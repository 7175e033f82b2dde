import {
  type ClientApp,
  methods,
  type ReadTextFileRequest,
  type ReadTextFileResponse,
  RequestError,
  type WriteTextFileRequest,
  type WriteTextFileResponse,
} from '@agentclientprotocol/sdk';
import {
  currentHostOs,
  type HostOs,
  isFsError,
  nativeToPathUri,
  type SandboxContextInput,
  toWireError,
} from '@fs-sandbox/policy';
import type { Broker } from '../broker-api.js';

/**
 * An ACP client's file-system methods (`fs/read_text_file`, `fs/write_text_file`), performed by the
 * broker under a sandbox context: what an agent reads or writes through the editor is bounded by
 * the kernel, not by the editor's own path checks. Agents send native absolute paths; the session
 * id picks the context, so one client can give each session its own workspace.
 */
export interface AcpFileSystemOptions {
  broker: Broker;
  /** The context every call of a session runs under (a function to give sessions their own). */
  sandbox: SandboxContextInput | ((sessionId: string) => SandboxContextInput);
  /** The OS the paths are native to (default: this host's). */
  os?: HostOs;
}

export interface AcpFileSystem {
  readTextFile(params: ReadTextFileRequest): Promise<ReadTextFileResponse>;
  writeTextFile(params: WriteTextFileRequest): Promise<WriteTextFileResponse>;
}

/** What the client advertises in `initialize` so agents use these methods. */
export const ACP_FILE_SYSTEM_CAPABILITIES = { fs: { readTextFile: true, writeTextFile: true } } as const;

export function acpFileSystem(options: AcpFileSystemOptions): AcpFileSystem {
  const os = options.os ?? currentHostOs();
  const contextOf = (sessionId: string) =>
    typeof options.sandbox === 'function' ? options.sandbox(sessionId) : options.sandbox;
  return {
    async readTextFile(params) {
      const text = await asAcpErrors(() =>
        options.broker.call('fs/readTextFile', {
          path: nativeToPathUri(params.path, os),
          line: params.line ?? null,
          limit: params.limit ?? null,
          sandbox: contextOf(params.sessionId),
        }),
      );
      return { content: text.content };
    },
    async writeTextFile(params) {
      await asAcpErrors(() =>
        options.broker.call('fs/writeFile', {
          path: nativeToPathUri(params.path, os),
          dataBase64: Buffer.from(params.content, 'utf8').toString('base64'),
          sandbox: contextOf(params.sessionId),
        }),
      );
      return {};
    },
  };
}

/** Registers the two methods on an ACP client app (`client()` from the SDK). */
export function withAcpFileSystem(app: ClientApp, options: AcpFileSystemOptions): ClientApp {
  const fileSystem = acpFileSystem(options);
  return app
    .onRequest(methods.client.fs.readTextFile, ({ params }) => fileSystem.readTextFile(params))
    .onRequest(methods.client.fs.writeTextFile, ({ params }) => fileSystem.writeTextFile(params));
}

/**
 * A broker refusal as an ACP request error: the same JSON-RPC code and message, and `data` keeps
 * `errorKind` (and the rest of the wire error's data), so an agent can branch on the kind.
 */
async function asAcpErrors<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!isFsError(error)) throw error;
    const wire = toWireError(error);
    throw new RequestError(wire.code, wire.message, wire.data);
  }
}
