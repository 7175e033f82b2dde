import type { CallOptions } from '@fs-sandbox/broker/internal';
import type { HostOs } from '@fs-sandbox/policy';
import type { FileHandleManager } from './file-handles.js';
import type { ProcessTable } from './process-table.js';
import type { ServerBroker } from './server-broker.js';

/**
 * What a server method's handler is given, in a file of its own: the method handlers and the
 * process handlers they include both need it, and neither may import the other for it (that was an
 * import cycle).
 */

/** What the audit log and the statistics learn while an operation runs (never its contents). */
export interface OperationFacts {
  paths: unknown[];
  sandboxed: boolean | null;
  bytesRead: number;
  bytesWritten: number;
}

export interface ServerCallContext {
  broker: ServerBroker;
  handles: FileHandleManager;
  processes: ProcessTable;
  os: HostOs;
  call: CallOptions & { signal: AbortSignal };
  facts: OperationFacts;
}
