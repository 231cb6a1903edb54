/**
 * A resource the server opens once, at start (a database, say), and hands out afterwards. Handing it
 * out never opens it: until it has opened, asking for it is a 503 that says what failed, and the
 * server's start tries again (a data directory mounted late).
 */
import { ApiFailure } from "../api/envelope";

export class OpenedAtStart<T> {
  private value: T | undefined;
  private failure: string | undefined;

  constructor(
    private readonly what: string,
    private readonly opening: () => T | Promise<T>,
  ) {}

  private pending?: Promise<T>;

  /** Opens it if it is not open yet (one opening at a time); throws what opening threw, and remembers it for `get`. */
  open(): Promise<T> {
    if (this.value !== undefined) return Promise.resolve(this.value);
    if (this.pending) return this.pending;
    const opening = (async () => {
      try {
        this.value = await this.opening();
        this.failure = undefined;
        return this.value;
      } catch (error) {
        this.failure = (error as Error).message;
        throw error;
      }
    })();
    this.pending = opening;
    // Settled: the next call opens again (or answers what opened).
    void opening.then(
      () => (this.pending = undefined),
      () => (this.pending = undefined),
    );
    return opening;
  }

  get opened(): boolean {
    return this.value !== undefined;
  }

  get(): T {
    if (this.value !== undefined) return this.value;
    throw new ApiFailure(
      503,
      "store_unavailable",
      `${this.what} is not open${this.failure ? ` (${this.failure})` : ""}; the server tries again every 30 s, see its log`,
    );
  }
}
