/** What {@link RepeatThrottle.take} decided for one occurrence of a failure. */
export interface RepeatDecision {
  /** Whether to write this occurrence to the log. */
  readonly log: boolean;
  /** When logging: how many occurrences of the same failure were left out since it was last logged. */
  readonly suppressed: number;
}

/** Logs each repeated failure at most once per interval (see {@link createRepeatThrottle}). */
export interface RepeatThrottle {
  /** Call once per occurrence of the failure named `key` (e.g. its code and message). */
  take(key: string): RepeatDecision;
}

// Distinct failures remembered at most; past it the oldest is forgotten (it is then logged once more).
const maxKeys = 256;

/**
 * A failure that repeats (a full disk, a database that went away: every retry and every request meets
 * it) is written to the log once per `intervalMs` per key, with the count left out since, so that a log
 * stays readable and bounded (< 1 line a second for any interval of 1 s or more) while the fault lasts.
 * A new failure is always logged at once.
 */
export function createRepeatThrottle(intervalMs: number, now: () => number = Date.now): RepeatThrottle {
  const seen = new Map<string, { loggedAt: number; suppressed: number }>();
  return Object.freeze({
    take(key: string): RepeatDecision {
      const at = now();
      const entry = seen.get(key);
      if (entry !== undefined && at - entry.loggedAt < intervalMs) {
        entry.suppressed += 1;
        return { log: false, suppressed: 0 };
      }
      seen.delete(key);
      seen.set(key, { loggedAt: at, suppressed: 0 });
      if (seen.size > maxKeys) seen.delete(seen.keys().next().value!);
      return { log: true, suppressed: entry?.suppressed ?? 0 };
    },
  });
}

/** The throttle key of an error: its code and message, with numbers (ids, counts, durations) blanked so retries of one fault share it. */
export function repeatKeyOf(error: unknown): string {
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
  const message = error instanceof Error ? error.message : String(error);
  return `${code}:${message.replace(/[0-9a-f]{8}-[0-9a-f-]{27,}/gi, '#').replace(/\d+/g, '#')}`;
}
