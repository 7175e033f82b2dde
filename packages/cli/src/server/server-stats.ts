/** A named provider of extra statistics (for example a warm helper pool) merged into every snapshot. */
export type StatsSource = () => unknown;

export interface ServerStatsSnapshot {
  startedAt: string;
  uptimeMs: number;
  connections: { open: number; total: number; refused: number };
  requests: {
    inFlight: number;
    queued: number;
    total: number;
    ok: number;
    failed: number;
    /** Refused before running (too many pending, or over the size limit); also counted in `failed`. */
    rejected: number;
  };
  handles: { open: number };
  /** `unsent`: bytes of finished replies waiting for their clients to read them (the reply budget). */
  bytes: { read: number; written: number; unsent: number };
  /** One entry per registered source, under the name it was registered with. */
  sources: Record<string, unknown>;
}

/** Live gauges the server computes from its connections when a snapshot is taken. */
export interface LiveGauges {
  openConnections: number;
  inFlight: number;
  queued: number;
  openHandles: number;
  unsentBytes: number;
}

/** Monotonic counters of one server; gauges come from the connections at snapshot time. */
export class ServerStats {
  private readonly started = Date.now();
  private readonly sources = new Map<string, StatsSource>();
  connectionsTotal = 0;
  connectionsRefused = 0;
  requestsTotal = 0;
  requestsOk = 0;
  requestsFailed = 0;
  requestsRejected = 0;
  bytesRead = 0;
  bytesWritten = 0;

  addSource(name: string, source: StatsSource): void {
    if (this.sources.has(name)) throw new Error(`statistics source \`${name}\` is already registered`);
    this.sources.set(name, source);
  }

  snapshot(gauges: LiveGauges): ServerStatsSnapshot {
    const sources: Record<string, unknown> = {};
    for (const [name, source] of this.sources) sources[name] = source();
    return {
      startedAt: new Date(this.started).toISOString(),
      uptimeMs: Date.now() - this.started,
      connections: {
        open: gauges.openConnections,
        total: this.connectionsTotal,
        refused: this.connectionsRefused,
      },
      requests: {
        inFlight: gauges.inFlight,
        queued: gauges.queued,
        total: this.requestsTotal,
        ok: this.requestsOk,
        failed: this.requestsFailed,
        rejected: this.requestsRejected,
      },
      handles: { open: gauges.openHandles },
      bytes: { read: this.bytesRead, written: this.bytesWritten, unsent: gauges.unsentBytes },
      sources,
    };
  }
}
