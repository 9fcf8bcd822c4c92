/** Runs tasks one at a time per key, in arrival order; tasks under other keys run freely. */
export interface KeyedLock {
  run<T>(key: string, task: () => Promise<T>): Promise<T>;
}

/**
 * An in-process lock per key; it does not reach other processes. The proxy holds one per conversation
 * while it compares a request with the stored tail and appends, so two requests of one conversation in
 * this process cannot both append the same turn; PostgreSQL's keyword index holds one per user while it
 * changes that user's in-memory copy. A task that fails does not stop the next one.
 */
export function createKeyedLock(): KeyedLock {
  const tails = new Map<string, Promise<unknown>>();
  return {
    async run<T>(key: string, task: () => Promise<T>): Promise<T> {
      const previous = tails.get(key) ?? Promise.resolve();
      const current = previous.then(task, task);
      const settled = current.then(
        () => undefined,
        () => undefined,
      );
      tails.set(key, settled);
      try {
        return await current;
      } finally {
        if (tails.get(key) === settled) tails.delete(key);
      }
    },
  };
}
