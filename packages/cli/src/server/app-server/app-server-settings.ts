import type { FsBroker } from '@fs-sandbox/broker/internal';
import type { HostOs, SandboxContextInput } from '@fs-sandbox/policy';
import type { ServerBroker } from '../server-broker.js';

/**
 * What the app-server is started with, in a leaf file: the surface, its watch table and its command
 * sessions all read it, and the surface imports the other two (importing it back was a cycle).
 */

/** What the app-server needs of the broker: the server's, plus the guard a watch judges names by. */
export type AppServerBroker = ServerBroker & Pick<FsBroker, 'prepareSandbox'>;

export interface AppServerSettings {
  broker: AppServerBroker;
  /** The server's policy: what every request runs under (from the CLI's profile flags). */
  context: SandboxContextInput;
  /** Native cwd of the server: where `command/exec` runs without `cwd`, and its workspace. */
  cwd: string;
  requireSandbox: boolean;
  /** The environment the server was started with (commands get its allowlisted part). */
  env: Record<string, string | undefined>;
  os?: HostOs;
}
