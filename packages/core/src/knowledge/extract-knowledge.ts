import type { SummarySourceMessage } from '../messages/summary-source-message.js';
import { isMemoryError } from '../errors/memory-error.js';
import type { GraphExtractor } from '../graph/graph-extractor.js';
import type { JobTimeSlice } from '../jobs/time-slice.js';
import { storeGraph } from '../graph/store-graph.js';
import type { Scope, UserScope } from '../messages/scope.js';
import type { CallOptions, Store } from '../store/store.js';
import type { FactExtractor } from '../facts/fact-extractor.js';
import { consolidateFacts } from '../facts/consolidate-facts.js';
import { reconcileFacts } from '../facts/reconcile-facts.js';

/** What {@link extractKnowledge} needs: the store, a fact extractor, optionally a graph extractor, and a clock. */
export interface KnowledgeDependencies {
  readonly store: Store;
  readonly factExtractor: FactExtractor;
  /** Without one, no entities or relations are stored. */
  readonly graphExtractor?: GraphExtractor;
  /** Clock in epoch ms, for the time facts and entities are recorded at; default `Date.now`. */
  readonly now?: () => number;
  /** Consolidate the user's facts ({@link consolidateFacts}) after a run that changed them; default true. */
  readonly consolidate?: boolean;
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
  /** Duplicates merged and contradictions settled by the consolidation after the run. */
  readonly factsMerged: number;
  readonly factsSettled: number;
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
 * and deduplicates relations. A run that stored facts ends with one {@link consolidateFacts} pass over
 * the user's facts (unless `consolidate` is false). Honours `signal` between rounds and in every store and extractor call;
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
  const totals = {
    rounds: 0,
    messagesRead: 0,
    factsAdded: 0,
    factsSuperseded: 0,
    factsRetired: 0,
    factsIgnored: 0,
    entitiesStored: 0,
    relationsStored: 0,
    relationsRetired: 0,
    factsMerged: 0,
    factsSettled: 0,
  };
  // After a run that stored facts, one consolidation pass over the user's facts (a few reads; facts are few).
  const finish = async (throughSeq: number, raced: boolean): Promise<KnowledgeRunResult> => {
    if (dependencies.consolidate !== false && totals.factsAdded + totals.factsSuperseded > 0) {
      const consolidation = await consolidateFacts(store, user, new Date(now()).toISOString(), callOptions);
      totals.factsMerged = consolidation.merged.length;
      totals.factsSettled = consolidation.settled.length;
    }
    return { ...totals, throughSeq, raced };
  };
  let cursor = await store.getCursor(scope, cursorName, callOptions);
  for (;;) {
    options.signal?.throwIfAborted();
    const batch = await store.listMessages(scope, { afterSeq: cursor, limit: knowledgeBatchSize }, callOptions);
    if (batch.length === 0) return finish(cursor, false);
    if (options.slice !== undefined && !options.slice.roomForRound()) return finish(cursor, false);
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
    const facts = await reconcileFacts(store, user, extracted, {
      conversationId: scope.conversationId,
      extractor: factExtractor.id,
      now: times,
      recordedAt,
      ...callOptions,
    });
    totals.factsAdded += facts.added.length;
    totals.factsSuperseded += facts.superseded.length;
    totals.factsRetired += facts.retired.length;
    totals.factsIgnored += facts.ignored.length;

    if (graphExtractor !== undefined) {
      const knownEntities = await store.listEntities(user, {}, callOptions);
      const graph = await graphExtractor.extract({ messages, knownEntities, ...callOptions });
      const stored = await storeGraph(store, user, graph, {
        conversationId: scope.conversationId,
        now: recordedAt,
        timeOf: (seq) => times.get(seq),
        ...callOptions,
      });
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
      if (isMemoryError(error, 'conflict')) return finish(cursor, true);
      throw error;
    }
    cursor = next;
  }
}
