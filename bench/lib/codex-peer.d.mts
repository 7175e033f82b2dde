/** Types of codex-peer.mjs for the test that checks its sandbox guard. */
export interface PeerServer {
  stop(): Promise<void>;
}
export const CODEX_VERSION: string;
export function locateCodex(env?: NodeJS.ProcessEnv, log?: (text: string) => void): string;
export function codexVersion(binary: string): string;
export function startCodex(binary: string, env?: NodeJS.ProcessEnv): Promise<PeerServer>;
export function assertSandboxes(
  server: PeerServer,
  sandbox: object | null,
  inside: string,
  outside: string,
): Promise<void>;
