/** Work that must not overlap: each run starts once the one asked for before it has ended, however that ended. */
export class Turns {
  private tail: Promise<unknown> = Promise.resolve();
  private asked = 0;

  /** how many runs were asked for and have not ended, the running one included */
  get waiting(): number {
    return this.asked;
  }

  /** Settles once every run asked for before it has ended, however it ended; it counts as a run meanwhile. */
  ended(): Promise<void> {
    return this.run(async () => undefined);
  }

  /** Asks for a turn now: `entered` settles once it comes, and it is held until `release` (which may come first). */
  hold(): { entered: Promise<void>; release: () => void } {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let enter!: () => void;
    const entered = new Promise<void>((resolve) => (enter = resolve));
    void this.run(() => (enter(), released));
    return { entered, release };
  }

  run<T>(work: () => Promise<T>): Promise<T> {
    this.asked++;
    const result = this.tail.then(work, work).finally(() => this.asked--);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
