import { createCompactor } from '../compaction/create-compactor.js';
import { buildContext } from '../context/build-context.js';
import { assertContextOptions, type ContextOptions } from '../context/context-options.js';
import { MemoryError } from '../errors/memory-error.js';
import { consolidateFacts, type ConsolidateOptions } from '../facts/consolidate-facts.js';
import type { FactQuery } from '../facts/fact.js';
import { correctFact, putFact, toIsoTime, type FactCorrection, type FactInput } from '../facts/put-fact.js';
import { createMemoryFileReader } from '../files/memory-file-reader.js';
import { createMemoryTool } from '../files/memory-tool.js';
import { graphNeighbours } from '../graph/graph-neighbours.js';
import { extractKnowledge } from '../knowledge/extract-knowledge.js';
import { checkToolAppend } from '../messages/check-tool-sequence.js';
import { eraseTarget, type EraseTarget } from '../messages/erase-target.js';
import type { MessageInput, Metadata } from '../messages/message.js';
import { prepareMessages } from '../messages/prepare-messages.js';
import { resolveScope, resolveUserScope, type ScopeInput, type UserScopeInput } from '../messages/scope.js';
import { recall, searchRecall, type RecallOptions } from '../recall/recall.js';
import type { ErasureReceipt, MessageSelection } from '../store/message-erasure.js';
import type { CallOptions, MessageRange, PageOptions } from '../store/store.js';
import { applyRetention, type RetentionOptions, type RetentionRules } from './apply-retention.js';
import { createBackgroundWork } from '../jobs/background-work.js';
import { getConversationStats } from './conversation-stats.js';
import { createDeferredWrites } from './deferred-writes.js';
import { eraseMessages } from './erase-messages.js';
import { expandSummary } from './expand-summary.js';
import type { Memory } from './memory.js';
import { jobBacklogAt, listConversations, listRecentFailures, storeReadiness } from './memory-reads.js';
import { resolveMemoryOptions, type MemoryOptions } from './memory-options.js';

/**
 * Wires a store, a token counter, the context builder and the background work into a {@link Memory}.
 * Its options are resolved and checked by `resolveMemoryOptions`; each method resolves its scope and
 * calls one part.
 */
export function createMemory(options: MemoryOptions): Memory {
  const resolved = resolveMemoryOptions(options);
  const { store, tokenCounter, limits, contextDefaults, now, embedder, refiner, queryEmbeddingTimeoutMs } = resolved;
  const compactor =
    resolved.compaction === false ? undefined : createCompactor({ store, tokenCounter, ...resolved.compaction, now });
  const knowledge = resolved.knowledge === false ? undefined : { store, ...resolved.knowledge, now };
  const background = createBackgroundWork({
    store,
    ...(knowledge === undefined
      ? {}
      : {
          extract: async (_job, scope, signal, slice) =>
            void (await extractKnowledge(knowledge, scope, { signal, slice })),
        }),
    ...(compactor === undefined ? {} : { compactor }),
    ...(embedder === undefined ? {} : { embedder }),
    ...(refiner === undefined ? {} : { refiner }),
    ...(resolved.worker === undefined ? {} : { worker: resolved.worker }),
    now,
  });
  const { worker } = background;
  const deferred = createDeferredWrites(resolved.onDeferredWriteError);
  const contextDependencies = {
    store,
    deferWrite: deferred.defer,
    counter: tokenCounter,
    now,
    ...(embedder === undefined ? {} : { embedder }),
    ...(refiner === undefined ? {} : { refiner: refiner.embedder }),
    ...(queryEmbeddingTimeoutMs === false ? {} : { queryEmbeddingTimeoutMs }),
    ...(resolved.onQueryEmbeddingError === undefined ? {} : { onQueryEmbeddingError: resolved.onQueryEmbeddingError }),
  };
  const memoryTool = createMemoryTool({
    store,
    now,
    ...(resolved.memoryToolLimits === undefined ? {} : { limits: resolved.memoryToolLimits }),
  });
  const isoNow = () => new Date(now()).toISOString();

  async function eraseSelected(
    target: UserScopeInput & MessageSelection,
    callOptions?: CallOptions,
  ): Promise<ErasureReceipt> {
    const { conversationId, fromSeq, toSeq, before, ...owner } = target;
    const selection = {
      ...(conversationId === undefined ? {} : { conversationId }),
      ...(fromSeq === undefined ? {} : { fromSeq }),
      ...(toSeq === undefined ? {} : { toSeq }),
      ...(before === undefined ? {} : { before }),
    };
    return eraseMessages(
      { store, now, afterErase: (scope, afterOptions) => background.afterAppend(scope, afterOptions) },
      resolveUserScope(owner),
      selection,
      callOptions,
    );
  }

  return Object.freeze({
    tokenCounter,
    memoryTool,
    memoryFiles: createMemoryFileReader(store),
    async append(scopeInput: ScopeInput, input: MessageInput | readonly MessageInput[], callOptions?: CallOptions) {
      const scope = resolveScope(scopeInput);
      const batch = prepareMessages(input, { limits, counter: tokenCounter, now });
      await checkToolAppend(store, scope, batch, callOptions);
      const stored = await store.appendMessages(scope, batch, callOptions);
      await background.afterAppend(scope, callOptions, stored);
      return stored;
    },
    async buildContext(scopeInput: ScopeInput, contextOptions: ContextOptions = {}) {
      return buildContext(
        contextDependencies,
        resolveScope(scopeInput),
        assertContextOptions(contextOptions, contextDefaults),
      );
    },
    listMessages: async (scopeInput: ScopeInput, range: MessageRange = {}, callOptions?: CallOptions) =>
      store.listMessages(resolveScope(scopeInput), range, callOptions),
    getConversation: async (scopeInput: ScopeInput, callOptions?: CallOptions) =>
      store.getConversation(resolveScope(scopeInput), callOptions),
    async stats(scopeInput: ScopeInput, callOptions?: CallOptions) {
      await deferred.settled();
      return getConversationStats(store, resolveScope(scopeInput), callOptions);
    },
    updateConversation: async (scopeInput: ScopeInput, update: { metadata: Metadata }, callOptions?: CallOptions) =>
      store.updateConversationMetadata(resolveScope(scopeInput), update?.metadata, callOptions),
    listConversations: async (
      filter: { tenantId?: string; userId?: string; search?: string } = {},
      page?: PageOptions,
      callOptions?: CallOptions,
    ) => listConversations(store, filter, page, callOptions),
    async listUsage(scopeInput: ScopeInput, page?: PageOptions, callOptions?: CallOptions) {
      await deferred.settled();
      return store.listUsage(resolveScope(scopeInput), page, callOptions);
    },
    erase: async (target: EraseTarget, callOptions?: CallOptions) => eraseTarget(store, target, callOptions),
    eraseMessages: eraseSelected,
    applyRetention: async (rules: RetentionRules, retentionOptions?: RetentionOptions) =>
      applyRetention({ store, eraseMessages: eraseSelected }, rules, isoNow(), retentionOptions),
    async erasures(filter: UserScopeInput & { allUsers?: boolean }, callOptions?: CallOptions) {
      const user = resolveUserScope(filter);
      return store.listErasures(
        { tenantId: user.tenantId, ...(filter.allUsers === true ? {} : { userId: user.userId }) },
        callOptions,
      );
    },
    async compact(scopeInput: ScopeInput, callOptions: CallOptions = {}) {
      if (compactor === undefined) throw new MemoryError('invalid_input', 'compaction is turned off for this memory');
      return compactor.compact(resolveScope(scopeInput), { force: true, ...callOptions });
    },
    listSummaries: async (scopeInput: ScopeInput, callOptions?: CallOptions) =>
      store.listSummaries(resolveScope(scopeInput), callOptions),
    expand: async (user: UserScopeInput, summaryId: string, callOptions?: CallOptions) =>
      expandSummary(store, resolveUserScope(user), summaryId, callOptions),
    recall: async (user: UserScopeInput, query: string, recallOptions?: RecallOptions) =>
      recall(
        {
          store,
          ...(embedder === undefined ? {} : { embedder }),
          ...(refiner === undefined ? {} : { refiner: refiner.embedder }),
        },
        resolveUserScope(user),
        query,
        recallOptions,
      ),
    searchRecall: async (user: UserScopeInput, query: string, recallOptions?: RecallOptions) =>
      searchRecall(
        {
          store,
          ...(embedder === undefined ? {} : { embedder }),
          ...(refiner === undefined ? {} : { refiner: refiner.embedder }),
          ...(queryEmbeddingTimeoutMs === false ? {} : { queryEmbeddingTimeoutMs }),
          onQueryEmbeddingError: resolved.onQueryEmbeddingError ?? (() => undefined),
        },
        resolveUserScope(user),
        query,
        recallOptions,
      ),
    facts: Object.freeze({
      list: (user: UserScopeInput, query: FactQuery = {}, callOptions?: CallOptions) =>
        store.listFacts(resolveUserScope(user), { now: isoNow(), ...query }, callOptions),
      history: (
        user: UserScopeInput,
        query: Omit<FactQuery, 'includeHistory' | 'asOf'> = {},
        callOptions?: CallOptions,
      ) => store.listFacts(resolveUserScope(user), { ...query, includeHistory: true }, callOptions),
      retire: (user: UserScopeInput, factId: string, callOptions?: CallOptions) =>
        store.retireFact(resolveUserScope(user), factId, isoNow(), callOptions),
      put: (user: UserScopeInput, fact: FactInput, callOptions?: CallOptions) =>
        putFact(store, resolveUserScope(user), fact, isoNow(), callOptions),
      correct: (user: UserScopeInput, factId: string, correction: FactCorrection, callOptions?: CallOptions) =>
        correctFact(store, resolveUserScope(user), factId, correction, isoNow(), callOptions),
      consolidate: (user: UserScopeInput, consolidateOptions?: ConsolidateOptions) =>
        consolidateFacts(store, resolveUserScope(user), isoNow(), consolidateOptions),
      expire: async (user: UserScopeInput, factId: string, expiresAt: string | null, callOptions?: CallOptions) =>
        store.setFactExpiry(
          resolveUserScope(user),
          factId,
          expiresAt === null ? undefined : toIsoTime('expiresAt', expiresAt),
          callOptions,
        ),
    }),
    graph: Object.freeze({
      entities: (user: UserScopeInput, query: { query?: string; limit?: number } = {}, callOptions?: CallOptions) =>
        store.listEntities(resolveUserScope(user), query, callOptions),
      neighbours: (
        user: UserScopeInput,
        entity: string,
        depth = 1,
        callOptions: CallOptions & { includeHistory?: boolean } = {},
      ) => graphNeighbours(store, resolveUserScope(user), entity, depth, callOptions),
      relations: (
        user: UserScopeInput,
        query: { entityIds: readonly string[]; includeHistory?: boolean },
        callOptions?: CallOptions,
      ) => store.listRelations(resolveUserScope(user), query, callOptions),
    }),
    jobs: Object.freeze({
      countByKind: async (tenant: { tenantId?: string }, callOptions?: CallOptions) =>
        store.countJobsByKind({ tenantId: resolveUserScope({ tenantId: tenant.tenantId }).tenantId }, callOptions),
      listRecentFailures: async (
        tenant: { tenantId?: string },
        query: { limit?: number } = {},
        callOptions?: CallOptions,
      ) => listRecentFailures(store, tenant, query, callOptions),
    }),
    jobBacklog: async (filter: { tenantId?: string } = {}, callOptions?: CallOptions) =>
      jobBacklogAt(store, filter, now(), callOptions),
    runPendingJobs: () => worker.drain(),
    readiness: async (callOptions?: CallOptions) => storeReadiness(store, callOptions),
    async close() {
      await worker.stop();
      await deferred.settled();
      await store.close();
    },
  });
}
