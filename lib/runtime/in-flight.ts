/**
 * One run of some work per key at a time: whoever asks while it runs gets the same promise, and once it
 * settles (a failure included) the next ask starts it again.
 */
export function joinInFlight<V>(running: Map<string, Promise<V>>, key: string, start: () => Promise<V>): Promise<V> {
  let pending = running.get(key);
  if (!pending) {
    pending = start().finally(() => running.delete(key));
    running.set(key, pending);
  }
  return pending;
}
