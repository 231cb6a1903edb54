/**
 * What a poll of an audit bucket reads, decided from its listing alone: objects not read yet (or rewritten since,
 * by their ETag), skipping what retention would drop at once; and how far later listings may start, past the
 * objects that are done and too old to be joined by a late one before them in key order.
 */

export interface ListedObject {
  key: string;
  etag: string;
  size: number;
  modifiedMs: number;
}

export interface PollPlan {
  /** in key order, which for Firehose's and the cloud exports' time-named keys is time order */
  toRead: ListedObject[];
  /** objects of the listing last modified before retention's start: never read */
  tooOld: number;
  alreadyRead: number;
}

/**
 * An export names its objects by the time it wrote them, so a key before the last one read can still appear while
 * deliveries are retried: a listing starts after a key only once a day has passed since it was written.
 */
export const SETTLE_MS = 24 * 3_600_000;

export function planPoll(listed: readonly ListedObject[], doneEtags: ReadonlyMap<string, string>, retainedFromMs: number): PollPlan {
  const plan: PollPlan = { toRead: [], tooOld: 0, alreadyRead: 0 };
  for (const object of listed) {
    if (object.modifiedMs < retainedFromMs) plan.tooOld++;
    else if (doneEtags.get(object.key) === object.etag) plan.alreadyRead++;
    else plan.toRead.push(object);
  }
  return plan;
}

/**
 * The last key of the listing's longest start whose objects are all done (or too old) and settled: where the next
 * listing may start. null when not even the first is.
 */
export function listAfterOf(
  listed: readonly ListedObject[],
  isDone: (object: ListedObject) => boolean,
  nowMs: number,
  retainedFromMs: number,
  settleMs = SETTLE_MS,
): string | null {
  let after: string | null = null;
  for (const object of listed) {
    const settled = object.modifiedMs < retainedFromMs || (object.modifiedMs <= nowMs - settleMs && isDone(object));
    if (!settled) break;
    after = object.key;
  }
  return after;
}
