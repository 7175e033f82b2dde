export interface SchedulerLimits {
  /** Requests of one connection that run at the same time. */
  maxInFlight: number;
  /** Requests that may wait for a free slot; beyond this the connection gets errors. */
  maxQueued: number;
  /** Request bytes held by running and waiting requests together (one request is always admitted). */
  maxPendingBytes: number;
}

/** Whether the next waiting job may start now, given how many of this connection's jobs run. */
export type StartGate = (running: number) => boolean;

export interface Job {
  bytes: number;
  /** Jobs with the same key run one after another in arrival order (used for one read handle). */
  key: string | null;
  run(): Promise<void>;
}

/**
 * Bounded concurrency for one connection. The reference runs one request at a time; we run up to
 * `maxInFlight` and match replies by id. Admission is bounded by count and by bytes, so a client
 * that floods the connection is refused rather than buffered without limit. A start gate (the
 * reply budget) may hold admitted jobs in the queue; `resume` starts them once it opens.
 */
export class RequestScheduler {
  private running = 0;
  private pendingBytes = 0;
  private readonly waiting: Job[] = [];
  private readonly keyTails = new Map<string, Promise<void>>();
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly limits: SchedulerLimits,
    private readonly gate: StartGate,
  ) {}

  get inFlight(): number {
    return this.running;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /** Starts or queues the job; false when the connection already holds too much. */
  trySchedule(job: Job): boolean {
    const startsNow = this.waiting.length === 0 && this.mayStartAnother();
    if (!startsNow && this.waiting.length >= this.limits.maxQueued) return false;
    if (this.pendingBytes > 0 && this.pendingBytes + job.bytes > this.limits.maxPendingBytes) return false;
    this.pendingBytes += job.bytes;
    const chained = this.chainByKey(job);
    if (startsNow) this.start(chained);
    else this.waiting.push(chained);
    return true;
  }

  /** Starts waiting jobs while there are free slots and the gate lets them. */
  resume(): void {
    while (this.waiting.length > 0 && this.mayStartAnother()) this.start(this.waiting.shift() as Job);
  }

  /** Drops every job that has not started (the connection is gone). */
  dropWaiting(): void {
    for (const job of this.waiting.splice(0)) this.pendingBytes -= job.bytes;
    this.notifyIfIdle();
  }

  /** Resolves once nothing runs or waits. */
  whenIdle(): Promise<void> {
    if (this.running === 0 && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  // A keyed job waits for its predecessor inside its own slot. That cannot deadlock: the
  // predecessor was admitted earlier and the queue is FIFO, so it already holds a slot or gets one first.
  private chainByKey(job: Job): Job {
    if (job.key === null) return job;
    const key = job.key;
    const previous = this.keyTails.get(key) ?? Promise.resolve();
    let done!: () => void;
    const tail = new Promise<void>((resolve) => {
      done = resolve;
    });
    this.keyTails.set(key, tail);
    return {
      ...job,
      run: async () => {
        await previous;
        try {
          await job.run();
        } finally {
          done();
          if (this.keyTails.get(key) === tail) this.keyTails.delete(key);
        }
      },
    };
  }

  private mayStartAnother(): boolean {
    return this.running < this.limits.maxInFlight && this.gate(this.running);
  }

  private start(job: Job): void {
    this.running += 1;
    void job
      .run()
      .catch(() => undefined)
      .finally(() => {
        this.running -= 1;
        this.pendingBytes -= job.bytes;
        this.resume();
        this.notifyIfIdle();
      });
  }

  private notifyIfIdle(): void {
    if (this.running !== 0 || this.waiting.length !== 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
