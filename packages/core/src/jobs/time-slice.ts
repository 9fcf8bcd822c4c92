/**
 * The time one job attempt has, for a handler that works in rounds (embedding batches, compaction
 * rounds, extraction rounds). Before each round it would run, the handler asks {@link roomForRound}:
 * the first round always has room; a later one has room while a round as long as the longest so far,
 * with half again as margin, still ends before the attempt's deadline. A handler told "no" stops there,
 * having stored the rounds it finished, and returns; the worker sees {@link ranOut}, ends the job and
 * queues a new one of its kind for the rest. A backlog larger than one attempt is then worked through
 * in attempts that each succeed, instead of attempts that each hit the deadline and fail until the
 * job's attempts are spent.
 */
export interface JobTimeSlice {
  /** When the attempt's signal aborts (epoch ms). */
  readonly deadline: number;
  /** Whether one more round fits before the deadline; asked right before each round, only when there is one to run. */
  roomForRound(): boolean;
  /** True once {@link roomForRound} said no: the handler stopped with work left. */
  readonly ranOut: boolean;
}

// A round may take longer than the longest one so far (a slower model reply, a bigger batch).
const roundMargin = 1.5;

/** Creates the {@link JobTimeSlice} of an attempt that ends at `deadline` on the clock `now`. */
export function createTimeSlice(deadline: number, now: () => number): JobTimeSlice {
  let roundStartedAt: number | undefined;
  let longestRoundMs = 0;
  let ranOut = false;
  return {
    deadline,
    get ranOut() {
      return ranOut;
    },
    roomForRound() {
      const time = now();
      if (roundStartedAt !== undefined) longestRoundMs = Math.max(longestRoundMs, time - roundStartedAt);
      roundStartedAt = time;
      if (time + roundMargin * longestRoundMs <= deadline) return true;
      ranOut = true;
      return false;
    },
  };
}
