import type { Summary } from '../compaction/summary.js';
import { MemoryError } from '../errors/memory-error.js';
import type { Message } from '../messages/message.js';
import type { UserScope } from '../messages/scope.js';
import type { CallOptions, Store } from '../store/store.js';

/** A summary opened up: the messages it stands for, and the summaries it folded (one step of provenance). */
export interface ExpandedSummary {
  readonly summary: Summary;
  readonly messages: readonly Message[];
  readonly folded: readonly Summary[];
}

/** Reads a summary of one of the user's conversations with its source messages; `not_found` otherwise. */
export async function expandSummary(
  store: Store,
  user: UserScope,
  summaryId: string,
  options?: CallOptions,
): Promise<ExpandedSummary> {
  const summary = await store.getSummary(user, summaryId, options);
  if (summary === undefined)
    throw new MemoryError('not_found', `summary ${summaryId} does not exist`, { details: { summaryId } });
  const scope = { tenantId: summary.tenantId, userId: summary.userId, conversationId: summary.conversationId };
  const messages = await store.listMessages(
    scope,
    { afterSeq: summary.fromSeq - 1, beforeSeq: summary.toSeq + 1 },
    options,
  );
  const folded: Summary[] = [];
  for (const id of summary.foldedSummaryIds) {
    const source = await store.getSummary(user, id, options);
    if (source !== undefined) folded.push(source);
  }
  return { summary, messages, folded };
}
