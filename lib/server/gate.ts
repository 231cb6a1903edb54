/**
 * At most `maxRunning` tasks at once and `maxWaiting` waiting their turn; past that a task is refused
 * at once with 503 busy and a Retry-After, rather than piling up memory (twenty snapshot checks at
 * once took 6.9 GB where one takes 400 MB).
 */
import { ApiFailure } from "../api/envelope";

export class BusyFailure extends ApiFailure {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(503, "busy", message);
  }
}

export class Gate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly maxRunning: number,
    private readonly maxWaiting: number,
    /** what a refusal says is busy, e.g. "snapshot checks" */
    private readonly what: string,
    private readonly retryAfterSeconds: number,
  ) {}

  /** How many run and wait now (shown in the UI with a refusal). */
  state(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.maxRunning) {
      if (this.waiting.length >= this.maxWaiting) {
        throw new BusyFailure(`the server is busy with ${this.what}: ${this.running} running and ${this.waiting.length} waiting; try again in ${this.retryAfterSeconds} s`, this.retryAfterSeconds);
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else this.running++;
    try {
      return await task();
    } finally {
      // The slot passes straight to the next in line, so `running` never dips below what runs.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
