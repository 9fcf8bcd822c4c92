import type { TestContext } from 'vitest';

// What each reliability test measured, carried to the reporter on the test's `meta` (vitest passes a
// test's meta from the worker to reporters), so one table of every figure ends the run's log.

/** One figure of the report: its name and value (a count, or a short text such as a seed). */
export type ReliabilityFigure = readonly [name: string, value: number | string];

/** The figures of one test, under a section name such as `crash loops (SQLite)`. */
export interface ReliabilityFigures {
  readonly section: string;
  readonly figures: readonly ReliabilityFigure[];
}

declare module 'vitest' {
  interface TaskMeta {
    reliability?: ReliabilityFigures[];
  }
}

/** Records figures of the running test for the report; call before the assertions, so a failing run reports them too. */
export function recordFigures(
  context: Pick<TestContext, 'task'>,
  section: string,
  figures: readonly ReliabilityFigure[],
): void {
  const meta = context.task.meta;
  meta.reliability = [...(meta.reliability ?? []), { section, figures }];
}
