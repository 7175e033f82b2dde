/**
 * @fs-sandbox/broker/remote: the library's typed Broker API over a connection to an exec-server,
 * `fs-sandbox serve` on WebSocket (`connectBroker`) or on a child's stdio (`spawnBroker`).
 */
export { type ErrorKind, FsError, isFsError, type ParamsIn, type ResultOf } from '@fs-sandbox/policy';
export type { Broker, CallInfo, CallOptions, FsMethod } from '../broker-api.js';
export {
  type ConnectOptions,
  connectBroker,
  type RemoteBroker,
  type SpawnOptions,
  spawnBroker,
} from './remote-broker.js';
export type { StdioCommand } from './transports.js';
