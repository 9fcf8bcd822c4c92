import type { Scope, UserScope } from '../messages/scope.js';
import type { PortCalls } from '../store/port.js';
import type { CallOptions } from '../store/store.js';
import type { NewSummary, Summary } from './summary.js';

/** Summaries and the watermark they move. Part of the `Store` port; an adapter implements it as a `StorePart<SummaryPort>`. */
export interface SummaryPort {
  /**
   * Stores a new summary version and moves the conversation's watermark to `summary.toSeq`, in one
   * transaction, together with a `summarize` usage entry for its cost. `conflict` when the watermark is
   * no longer `expectedWatermark` (another worker compacted first: nothing is written); `not_found`
   * without the conversation; `invalid_input` when `toSeq` is behind the watermark or past the last message.
   * With `expectedErasedMessages`, also `conflict` when the conversation's `erasedMessages` (0 when absent)
   * is no longer that: messages were erased since the caller read them, so its summary may hold their text.
   */
  insertSummary(
    scope: Scope,
    summary: NewSummary,
    options: CallOptions & { expectedWatermark: number; expectedErasedMessages?: number },
  ): Promise<Summary>;
  /** The most recently written summary of a conversation (the one the watermark points at). */
  getLatestSummary(scope: Scope, options?: CallOptions): Promise<Summary | undefined>;
  /** Every summary version of a conversation, oldest first. */
  listSummaries(scope: Scope, options?: CallOptions): Promise<Summary[]>;
  /** One summary by id, only within the user's own conversations. */
  getSummary(user: UserScope, summaryId: string, options?: CallOptions): Promise<Summary | undefined>;
}

/** What each method of {@link SummaryPort} does, in the words of an error, and the index of its call options. */
export const summaryPortCalls: PortCalls<SummaryPort> = {
  insertSummary: ['writing a summary', 2],
  getLatestSummary: ['reading the latest summary', 1],
  listSummaries: ['listing summaries', 1],
  getSummary: ['reading a summary', 2],
};
