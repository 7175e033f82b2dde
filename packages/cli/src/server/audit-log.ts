import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import type { NetworkEvent } from '@fs-sandbox/broker/internal';
import type { ErrorKind } from '@fs-sandbox/policy';

export type AuditOutcome = 'ok' | 'denied' | 'error';

/** What the server knows about one finished operation. Contents never reach this type. */
export interface AuditEvent {
  startedAt: number;
  connection: string;
  method: string;
  /** The path URIs named by the request (path, sourcePath, destinationPath, or the handle's path). */
  paths: unknown[];
  sandboxed: boolean | null;
  errorKind: ErrorKind | null;
  bytesRead: number;
  bytesWritten: number;
  durationMs: number;
}

/** One line of the audit log. */
export interface AuditRecord {
  time: string;
  connection: string;
  method: string;
  paths: string[];
  sandboxed: boolean | null;
  outcome: AuditOutcome;
  errorKind: ErrorKind | null;
  bytesRead: number;
  bytesWritten: number;
  durationMs: number;
}

/**
 * One line per connection a command made through the broker's proxy or managed ports: refused and
 * failed ones when they happen, allowed ones when they end. Hosts are written as they are (what a
 * command reached is what an auditor reads this for); bytes read are the destination's, written
 * the command's.
 */
export interface NetworkAuditRecord {
  time: string;
  connection: string;
  method: 'network';
  processId: string;
  protocol: NetworkEvent['protocol'];
  host: string | null;
  port: number | null;
  address: string | null;
  outcome: AuditOutcome;
  reason: string | null;
  bytesRead: number;
  bytesWritten: number;
  durationMs: number;
}

const NETWORK_OUTCOMES: Record<NetworkEvent['outcome'], AuditOutcome> = {
  allowed: 'ok',
  refused: 'denied',
  failed: 'error',
};

export function networkAuditRecord(
  connection: string,
  processId: string,
  event: NetworkEvent,
): NetworkAuditRecord {
  return {
    time: new Date(event.time).toISOString(),
    connection,
    method: 'network',
    processId: processId.slice(0, MAX_RAW_PATH_CHARS),
    protocol: event.protocol,
    host: event.host,
    port: event.port,
    address: event.address,
    outcome: NETWORK_OUTCOMES[event.outcome],
    reason: event.reason?.slice(0, MAX_RAW_PATH_CHARS) ?? null,
    bytesRead: event.bytesDown,
    bytesWritten: event.bytesUp,
    durationMs: event.durationMs,
  };
}

export interface AuditSink {
  record(event: AuditEvent): void;
  /** A network connection of command `processId` on `connection` (see NetworkAuditRecord). */
  recordNetwork(connection: string, processId: string, event: NetworkEvent): void;
  /** Set once a write failed; the server then refuses operations rather than run them unaudited. */
  readonly failure: Error | null;
  close(): Promise<void>;
}

// Refusals by policy (as opposed to failures) are what an auditor looks for first.
const DENIED_KINDS: ReadonlySet<ErrorKind> = new Set([
  'permission_denied',
  'protected_path',
  'symlink_escape',
]);

/** Longest raw path kept with --audit-raw-paths; a hostile request cannot bloat the log. */
const MAX_RAW_PATH_CHARS = 4096;

function outcomeOf(errorKind: ErrorKind | null): AuditOutcome {
  if (errorKind === null) return 'ok';
  return DENIED_KINDS.has(errorKind) ? 'denied' : 'error';
}

/**
 * Builds the line for one event. Paths are sha256 hashes unless raw paths were asked for: the log
 * is often shipped elsewhere, and file names alone can be sensitive (customer names, secrets in
 * names). Only strings count as paths; anything else in a path field is recorded as nothing.
 */
function auditRecordFor(event: AuditEvent, rawPaths: boolean): AuditRecord {
  const paths = event.paths
    .filter((path): path is string => typeof path === 'string')
    .map((path) =>
      rawPaths
        ? path.slice(0, MAX_RAW_PATH_CHARS)
        : `sha256:${createHash('sha256').update(path).digest('hex')}`,
    );
  return {
    time: new Date(event.startedAt).toISOString(),
    connection: event.connection,
    method: event.method,
    paths,
    sandboxed: event.sandboxed,
    outcome: outcomeOf(event.errorKind),
    errorKind: event.errorKind,
    bytesRead: event.bytesRead,
    bytesWritten: event.bytesWritten,
    durationMs: Math.round(event.durationMs * 1000) / 1000,
  };
}

/** Appends JSON lines to a file created 0600 (the log reveals which files an agent touched). */
export class FileAuditLog implements AuditSink {
  private failed: Error | null = null;

  private constructor(
    private readonly stream: Writable,
    private readonly rawPaths: boolean,
  ) {
    stream.on('error', (error) => {
      this.failed ??= error;
    });
  }

  /** Opening fails loudly at start-up: a server asked to audit never starts without its log. */
  static async open(file: string, options: { rawPaths: boolean }): Promise<FileAuditLog> {
    const handle = await open(file, 'a', 0o600);
    return new FileAuditLog(handle.createWriteStream(), options.rawPaths);
  }

  get failure(): Error | null {
    return this.failed;
  }

  record(event: AuditEvent): void {
    if (this.failed) return;
    this.stream.write(`${JSON.stringify(auditRecordFor(event, this.rawPaths))}\n`);
  }

  recordNetwork(connection: string, processId: string, event: NetworkEvent): void {
    if (this.failed) return;
    this.stream.write(`${JSON.stringify(networkAuditRecord(connection, processId, event))}\n`);
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.stream.destroyed) resolve();
      else this.stream.end(() => resolve());
    });
  }
}
