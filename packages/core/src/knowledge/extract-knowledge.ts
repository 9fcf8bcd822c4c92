import type { SummarySourceMessage } from '../messages/summary-source-message.js';
import { isMemoryError } from '../errors/memory-error.js';
import type { GraphExtractor } from '../graph/graph-extractor.js';
import type { JobTimeSlice } from '../jobs/time-slice.js';
import { storeGraph } from '../graph/store-graph.js';
import type { Scope, UserScope } from '../messages/scope.js';
import type { CallOptions, Store } from '../store/store.js';
import type { FactExtractor } from '../facts/fact-extractor.js';
import { reconcileFacts } from '../facts/reconcile-facts.js';

/** What {@link extractKnowledge} needs: the store, a fact extractor, optionally a graph extractor, and a clock. */
export interface KnowledgeDependencies {
  readonly store: Store;
  readonly factExtractor: FactExtractor;
  /** Without one, no entities or relations are stored. */
  readonly graphExtractor?: GraphExtractor;
  /** Clock in epoch ms, for the time facts and entities are recorded at; default `Date.now`. */
  readonly now?: () => number;
}

/** What one run of {@link extractKnowledge} did. */
export interface KnowledgeRunResult {
  /** Rounds that read messages (each at most {@link knowledgeBatchSize} messages). */
  readonly rounds: number;
  readonly messagesRead: number;
  /** Where this run left the cursor (or found it): messages through this seq were read by this run or an earlier one. */
  readonly throughSeq: number;
  readonly factsAdded: number;
  readonly factsSuperseded: number;
  readonly factsRetired: number;
  readonly factsIgnored: number;
  readonly entitiesStored: number;
  readonly relationsStored: number;
  readonly relationsRetired: number;
  /** True when another worker moved the cursor first and this run stopped (not an error). */
  readonly raced: boolean;
}

/** Most messages one round hands to the extractors. */
export const knowledgeBatchSize = 200;

/** The store cursor of a conversation's knowledge extraction: `knowledge:<extractor id>`. */
export function knowledgeCursorName(factExtractorId: string): string {
  return `knowledge:${factExtractorId}`;
}

/**
 * The `extract` job body: reads a conversation's messages after its cursor `knowledge:<extractor id>`,
 * at most {@link knowledgeBatchSize} per round, runs the fact extractor (with the user's current facts)
 * and {@link reconcileFacts}, then the graph extractor (with the user's entities) and `storeGraph` when
 * one is given, and moves the cursor to the round's last seq by compare-and-set; it loops until no
 * message is left. A `conflict` on the cursor means another worker read the same messages: the run
 * stops without error (`raced`). An extractor or store failure is thrown (the job retries with backoff)
 * and leaves the cursor where it was; the writes of a failed round are safe to repeat, since
 * reconciliation ignores facts already recorded from the same message and the store merges entities
 * and deduplicates relations. Honours `signal` between rounds and in every store and extractor call;
 * with a job's `slice`, a round that would not end before the attempt's deadline is not started (the
 * job queues the rest).
 */
export async function extractKnowledge(
  dependencies: KnowledgeDependencies,
  scope: Scope,
  options: { readonly signal?: AbortSignal; readonly slice?: JobTimeSlice } = {},
): Promise<KnowledgeRunResult> {
  const { store, factExtractor, graphExtractor } = dependencies;
  const now = dependencies.now ?? Date.now;
  const callOptions: CallOptions = options.signal === undefined ? {} : { signal: options.signal };
  const user: UserScope = { tenantId: scope.tenantId, userId: scope.userId };
  const cursorName = knowledgeCursorName(factExtractor.id);
  const totals = { rounds: 0, messagesRead: 0, factsAdded: 0, factsSuperseded: 0, factsRetired: 0, factsIgnored: 0, entitiesStored: 0, relationsStored: 0, relationsRetired: 0 };
  let cursor = await store.getCursor(scope, cursorName, callOptions);
  for (;;) {
    options.signal?.throwIfAborted();
    const batch = await store.listMessages(scope, { afterSeq: cursor, limit: knowledgeBatchSize }, callOptions);
    if (batch.length === 0) return { ...totals, throughSeq: cursor, raced: false };
    if (options.slice !== undefined && !options.slice.roomForRound()) return { ...totals, throughSeq: cursor, raced: false };
    const messages: SummarySourceMessage[] = batch.map((message) => ({
      seq: message.seq,
      role: message.role,
      content: message.content,
      createdAt: message.createdAt,
      ...(message.name === undefined ? {} : { name: message.name }),
    }));
    const times = new Map(messages.map((message) => [message.seq, message.createdAt]));
    const recordedAt = new Date(now()).toISOString();

    const knownFacts = await store.listFacts(user, {}, callOptions);
    const extracted = await factExtractor.extract({ messages, knownFacts, ...callOptions });
    const facts = await reconcileFacts(store, user, extracted, { conversationId: scope.conversationId, extractor: factExtractor.id, now: times, recordedAt, ...callOptions });
    totals.factsAdded += facts.added.length;
    totals.factsSuperseded += facts.superseded.length;
    totals.factsRetired += facts.retired.length;
    totals.factsIgnored += facts.ignored.length;

    if (graphExtractor !== undefined) {
      const knownEntities = await store.listEntities(user, {}, callOptions);
      const graph = await graphExtractor.extract({ messages, knownEntities, ...callOptions });
      const stored = await storeGraph(store, user, graph, { conversationId: scope.conversationId, now: recordedAt, timeOf: (seq) => times.get(seq), ...callOptions });
      totals.entitiesStored += stored.entities.length;
      totals.relationsStored += stored.relations.length;
      totals.relationsRetired += stored.retired.length;
    }

    const next = batch[batch.length - 1]!.seq;
    totals.rounds += 1;
    totals.messagesRead += batch.length;
    try {
      await store.advanceCursor(scope, cursorName, cursor, next, callOptions);
    } catch (error) {
      if (isMemoryError(error, 'conflict')) return { ...totals, throughSeq: cursor, raced: true };
      throw error;
    }
    cursor = next;
  }
}
