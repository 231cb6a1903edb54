/**
 * At most `maxRunning` tasks at once and `maxWaiting` waiting their turn; past that a task is refused
 * at once (503 busy) rather than piling up memory or time: twenty snapshot checks at once took 6.9 GB
 * where one takes 400 MB, and Prometheus queries behind a slow one would wait without end. With a
 * deadline, a task leaves the queue when it passes, and a running task past it gives its slot back
 * whatever became of it, so nothing can hold the gate.
 */
import { ApiFailure } from "./envelope";

export class BusyFailure extends ApiFailure {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(503, "busy", message);
  }
}

/** A task's deadline, and what it fails with when it passes while waiting or while running. */
export interface Deadline {
  signal: AbortSignal;
  waited: () => Error;
  overran: () => Error;
}

export class Gate {
  /** slots taken: those running, and those handed to the next in line that has not started yet */
  private occupied = 0;
  /** when each running task started */
  private readonly running = new Set<{ startedMs: number }>();
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly maxRunning: number,
    private readonly maxWaiting: number,
    /** the failure a task past both bounds is refused with, given how many run and wait */
    private readonly refuse: (running: number, waiting: number) => Error,
    private readonly clock: () => number = Date.now,
  ) {}

  get active(): number {
    return this.occupied;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /** How long the oldest running task has run (0: none). */
  oldestRunningMs(): number {
    let oldest = Infinity;
    for (const holder of this.running) oldest = Math.min(oldest, holder.startedMs);
    return oldest === Infinity ? 0 : this.clock() - oldest;
  }

  async run<T>(task: () => Promise<T>, deadline?: Deadline): Promise<T> {
    if (this.occupied >= this.maxRunning) {
      if (this.waiting.length >= this.maxWaiting) throw this.refuse(this.occupied, this.waiting.length);
      await this.turn(deadline);
    } else this.occupied++;
    const holder = { startedMs: this.clock() };
    this.running.add(holder);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.running.delete(holder);
      // The slot passes straight to the next in line, so `occupied` never dips below what runs.
      const next = this.waiting.shift();
      if (next) next();
      else this.occupied--;
    };
    try {
      if (!deadline) return await task();
      const overdue = new Promise<never>((_, reject) => {
        deadline.signal.addEventListener(
          "abort",
          () => {
            release();
            reject(deadline.overran());
          },
          { once: true },
        );
      });
      return await Promise.race([task(), overdue]);
    } finally {
      release();
    }
  }

  /** Waits to be handed a slot; past the deadline, leaves the queue. */
  private turn(deadline: Deadline | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const take = () => {
        deadline?.signal.removeEventListener("abort", expire);
        resolve();
      };
      const expire = () => {
        const at = this.waiting.indexOf(take);
        if (at < 0) return;
        this.waiting.splice(at, 1);
        reject(deadline!.waited());
      };
      this.waiting.push(take);
      deadline?.signal.addEventListener("abort", expire, { once: true });
    });
  }
}
