/**
 * Writes a call starts but does not wait for before it answers (the usage ledger entry of a context
 * build): a read of the same memory that depends on them waits for them first, `close` waits for all,
 * and a failure goes to `onError` (the answer already went out, so there is nobody else to tell).
 */
export interface DeferredWrites {
  /** Tracks a write started now. */
  defer(this: void, write: Promise<unknown>): void;
  /** Resolves once every write deferred so far has settled (never rejects). */
  settled(): Promise<void>;
}

/** Creates a {@link DeferredWrites}; `onError` gets each deferred write's failure (default: dropped silently is not allowed, so it is required). */
export function createDeferredWrites(onError: (error: unknown) => void): DeferredWrites {
  const pending = new Set<Promise<void>>();
  return Object.freeze({
    defer(write: Promise<unknown>) {
      const tracked: Promise<void> = write.then(
        () => undefined,
        (error: unknown) => onError(error),
      );
      pending.add(tracked);
      void tracked.finally(() => pending.delete(tracked));
    },
    async settled() {
      while (pending.size > 0) await Promise.all([...pending]);
    },
  });
}
