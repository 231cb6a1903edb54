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
    private readonly opening: () => T,
  ) {}

  /** Opens it if it is not open yet; throws what opening threw, and remembers it for `get`. */
  open(): T {
    if (this.value !== undefined) return this.value;
    try {
      this.value = this.opening();
      this.failure = undefined;
      return this.value;
    } catch (error) {
      this.failure = (error as Error).message;
      throw error;
    }
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
