import { compactionSettingsForBudget, resolveCompactionSettings, type CompactionSettings } from '../compaction/compaction-settings.js';
import { createCompactor } from '../compaction/create-compactor.js';
import { ExtractiveSummarizer } from '../compaction/extractive-summarizer.js';
import type { Summary } from '../compaction/summary.js';
import type { Summarizer } from '../compaction/summarizer.js';
import { buildContext } from '../context/build-context.js';
import { createDeferredWrites } from './deferred-writes.js';
import { assertContextOptions, resolveContextDefaults, type ContextDefaults, type ContextOptions } from '../context/context-options.js';
import type { BuiltContext } from '../context/context-types.js';
import { MemoryError } from '../errors/memory-error.js';
import { createMemoryFileReader, type MemoryFileReader } from '../files/memory-file-reader.js';
import { checkToolAppend } from '../messages/check-tool-sequence.js';
import type { Message, MessageInput, Metadata } from '../messages/message.js';
import { eraseTarget, type EraseTarget } from '../messages/erase-target.js';
import { prepareMessages } from '../messages/prepare-messages.js';
import { resolveScope, resolveUserScope, type ScopeInput, type UserScopeInput } from '../messages/scope.js';
import { defaultMessageLimits, type MessageLimits } from '../messages/validate-message.js';
import type { CallOptions, Conversation, EraseResult, MessageRange, Page, PageOptions, Store, StoreReadiness } from '../store/store.js';
import { readJobBacklog, type Job, type JobBacklogStatus, type JobKindCount } from '../jobs/job.js';
import type { UsageEntry } from '../usage/usage.js';
import { createGptTokenCounter } from '../tokens/gpt-token-counter.js';
import type { TokenCounter } from '../tokens/token-counter.js';
import type { Fact, FactQuery } from '../facts/fact.js';
import type { FactExtractor } from '../facts/fact-extractor.js';
import { extractKnowledge } from '../knowledge/extract-knowledge.js';
import { HeuristicFactExtractor } from '../facts/heuristic-fact-extractor.js';
import { consolidateFacts, type ConsolidateOptions, type FactConsolidation } from '../facts/consolidate-facts.js';
import { correctFact, putFact, toIsoTime, type FactCorrection, type FactInput } from '../facts/put-fact.js';
import type { Entity, Relation } from '../graph/entity.js';
import { graphNeighbours, type GraphNeighbourhood } from '../graph/graph-neighbours.js';
import type { GraphExtractor } from '../graph/graph-extractor.js';
import { HeuristicGraphExtractor } from '../graph/heuristic-graph-extractor.js';
import type { Embedder } from '../recall/embedder.js';
import { recall, type RecallHit, type RecallOptions } from '../recall/recall.js';
import { createMemoryTool, type MemoryTool, type MemoryToolLimits } from '../files/memory-tool.js';
import { createBackgroundWork } from './background-work.js';
import { getConversationStats, type ConversationStats } from './conversation-stats.js';
import { expandSummary, type ExpandedSummary } from './expand-summary.js';
import { applyRetention, type RetentionOptions, type RetentionOutcome, type RetentionRules } from './apply-retention.js';
import { eraseMessages } from './erase-messages.js';
import type { ErasureAuditEntry, ErasureReceipt, MessageSelection } from '../store/message-erasure.js';

/** Options of {@link createMemory}. Only `store` is required. */
export interface MemoryOptions {
  readonly store: Store;
  /** Default: gpt-tokenizer with `o200k_base`. */
  readonly tokenCounter?: TokenCounter;
  /** Limits on appended messages; missing fields take {@link defaultMessageLimits}. */
  readonly limits?: Partial<MessageLimits>;
  /** Context defaults; missing fields take the built-in ones (policy `token-window`, 2,000 tokens, 4 turns). */
  readonly context?: Partial<ContextDefaults>;
  /** Clock for message and ledger times, in epoch ms; default `Date.now`. */
  readonly now?: () => number;
  /**
   * Background compaction; `false` turns it off. Default: the offline {@link ExtractiveSummarizer} with
   * `compactionSettingsForBudget(context.maxTokens)`; `settings` overrides single fields of those.
   */
  readonly compaction?: false | { readonly summarizer?: Summarizer; readonly settings?: Partial<CompactionSettings> };
  /** Embeds messages in the background for vector recall (e.g. `UseLiteEmbedder` from `@mnemo/models`); without one, recall is keyword-only. */
  readonly embedder?: Embedder;
  /**
   * Deadline of the hybrid context's query embedding, in ms (default {@link defaultQueryEmbeddingTimeoutMs});
   * past it the context recalls keyword-only and its report says `embedding_deadline`. `false`: wait for it.
   * Only an embedder off the event loop (a worker thread, a remote endpoint) can be cut off in time.
   */
  readonly queryEmbeddingTimeoutMs?: number | false;
  /**
   * Background extraction of durable facts and the entity graph from new messages; `false` turns it off.
   * Default: the offline `HeuristicFactExtractor` and `HeuristicGraphExtractor`; `graphExtractor: false` skips the graph;
   * `consolidate: false` skips the consolidation pass (duplicates merged, contradictions settled) after each run that stored facts.
   */
  readonly knowledge?: false | { readonly factExtractor?: FactExtractor; readonly graphExtractor?: GraphExtractor | false; readonly consolidate?: boolean };
  /** Caps of each user's `/memories` directory (the memory tool); missing fields take `defaultMemoryToolLimits`. */
  readonly memoryToolLimits?: Partial<MemoryToolLimits>;
  /**
   * The in-process job worker. `autoStart: false` leaves jobs queued until `runPendingJobs()` (or another
   * process's worker); `concurrency` job loops run side by side (default 1); `attemptTimeoutMs` is the
   * deadline of one job attempt (default 45,000 ms, below the 60,000 ms lease).
   */
  readonly worker?: {
    readonly autoStart?: boolean;
    readonly workerId?: string;
    readonly leaseMs?: number;
    readonly pollIntervalMs?: number;
    readonly attemptTimeoutMs?: number;
    readonly concurrency?: number;
    readonly onError?: (error: unknown) => void;
    /** Called when a job finished degraded, e.g. a summary written by the fallback summarizer. */
    readonly onWarning?: (warning: string) => void;
  };
  /**
   * Called when a write done after its call answered failed: the usage ledger entry of a context build,
   * which the build does not wait for (a read never waits on a write). Default: none (such a failure is
   * then only seen as a missing ledger entry).
   */
  readonly onDeferredWriteError?: (error: unknown) => void;
}

/** The memory engine a library user calls. Every method validates its input (`invalid_input`). */
export interface Memory {
  /** Appends one message or a batch, atomically and in order; returns them as stored (with `seq`). */
  append(scope: ScopeInput, messages: MessageInput | readonly MessageInput[], options?: CallOptions): Promise<Message[]>;
  /** Builds the context to send for a conversation and records it in the usage ledger. */
  buildContext(scope: ScopeInput, options?: ContextOptions): Promise<BuiltContext>;
  /** Reads stored messages of a conversation: oldest first by default; `afterSeq`, `beforeSeq`, `limit` and `order: 'desc'` (newest first) to page or read the tail. */
  listMessages(scope: ScopeInput, range?: MessageRange, options?: CallOptions): Promise<Message[]>;
  /** The conversation's row (counters, watermark, metadata) in one read; `undefined` when it has no messages. */
  getConversation(scope: ScopeInput, options?: CallOptions): Promise<Conversation | undefined>;
  /** Counters and usage of one conversation; `undefined` when it has no messages. */
  stats(scope: ScopeInput, options?: CallOptions): Promise<ConversationStats | undefined>;
  /** Replaces a conversation's metadata whole (merge before calling); `undefined` when the conversation has no messages. `invalid_input` as `Store.updateConversationMetadata`. */
  updateConversation(scope: ScopeInput, update: { metadata: Metadata }, options?: CallOptions): Promise<Conversation | undefined>;
  /** Conversations of a tenant, or of one of its users, cursor-paged; `search` keeps those whose user or conversation id contains it (ASCII case ignored). */
  listConversations(filter?: { tenantId?: string; userId?: string; search?: string }, page?: PageOptions, options?: CallOptions): Promise<Page<Conversation>>;
  /** The usage ledger of one conversation, entry by entry (context builds and compactions), oldest first, cursor-paged. */
  listUsage(scope: ScopeInput, page?: PageOptions, options?: CallOptions): Promise<Page<UsageEntry>>;
  /** Erases a conversation, or every conversation of a user. */
  erase(target: EraseTarget, options?: CallOptions): Promise<EraseResult>;
  /**
   * Erases some messages of a user (one, a seq range of a conversation, or all said before a time) with
   * everything made of them: vectors, summaries (compaction re-derives them from what remains, in the
   * background), facts and relations only they stated, memory files their memory-tool calls wrote. Returns
   * the receipt; the store keeps an audit entry without content (`erasures`). `invalid_input` for a bad selection.
   */
  eraseMessages(target: UserScopeInput & MessageSelection, options?: CallOptions): Promise<ErasureReceipt>;
  /** The audit log of erasures of a tenant, or of one user, oldest first. */
  erasures(filter: UserScopeInput & { allUsers?: boolean }, options?: CallOptions): Promise<ErasureAuditEntry[]>;
  /** Erases, per user of a tenant, the messages older than their retention policy allows, as `eraseMessages` does (see `applyRetention`). */
  applyRetention(rules: RetentionRules, options?: RetentionOptions): Promise<RetentionOutcome[]>;
  /** Compacts a conversation now, in the caller, folding all but the kept recent turns into the summary. */
  compact(scope: ScopeInput, options?: CallOptions): Promise<Summary[]>;
  /** Every summary version of a conversation, oldest first. */
  listSummaries(scope: ScopeInput, options?: CallOptions): Promise<Summary[]>;
  /** A summary with the messages it stands for and the summaries it folded; `not_found` outside the user's own. */
  expand(user: UserScopeInput, summaryId: string, options?: CallOptions): Promise<ExpandedSummary>;
  /** The few past messages of the user that `query` needs, across their conversations (keyword + vector, fused). */
  recall(scope: UserScopeInput, query: string, options?: RecallOptions): Promise<RecallHit[]>;
  /** The user's facts: current by default, `asOf` a date, or history; and ending one by hand. */
  readonly facts: {
    list(user: UserScopeInput, query?: FactQuery, options?: CallOptions): Promise<Fact[]>;
    history(user: UserScopeInput, query?: Omit<FactQuery, 'includeHistory' | 'asOf'>, options?: CallOptions): Promise<Fact[]>;
    retire(user: UserScopeInput, factId: string, options?: CallOptions): Promise<Fact>;
    /** States a fact by hand; a new value of a single-valued attribute supersedes the current one. */
    put(user: UserScopeInput, fact: FactInput, options?: CallOptions): Promise<Fact>;
    /** Corrects a current fact: the corrected value supersedes it, history kept (`not_found`, `conflict`). */
    correct(user: UserScopeInput, factId: string, correction: FactCorrection, options?: CallOptions): Promise<Fact>;
    /** Sets when a current fact expires (ISO 8601), or with `null` that it never does (`not_found`, `conflict`, `invalid_input`). */
    expire(user: UserScopeInput, factId: string, expiresAt: string | null, options?: CallOptions): Promise<Fact>;
    /** Merges the user's duplicate facts and settles contradictions by time, history kept (see `consolidateFacts`); extraction runs it too. */
    consolidate(user: UserScopeInput, options?: ConsolidateOptions): Promise<FactConsolidation>;
  };
  /** The user's entity graph. */
  readonly graph: {
    /** Entities by name; `query` matches a name or alias prefix. */
    entities(user: UserScopeInput, query?: { query?: string; limit?: number }, options?: CallOptions): Promise<Entity[]>;
    /** An entity (by id, name or alias) and everything within `depth` (1–3) relations of it; `not_found` for an unknown one. */
    neighbours(user: UserScopeInput, entity: string, depth?: number, options?: CallOptions & { includeHistory?: boolean }): Promise<GraphNeighbourhood>;
    /** Relations whose subject or object is one of `entityIds` (current ones, or all with `includeHistory`), with their source messages. */
    relations(user: UserScopeInput, query: { entityIds: readonly string[]; includeHistory?: boolean }, options?: CallOptions): Promise<Relation[]>;
  };
  /** The background job queue of one tenant, as the inspector shows it. */
  readonly jobs: {
    /** Jobs by kind and status, with when the oldest of each was queued; by kind, then status. */
    countByKind(tenant: { tenantId?: string }, options?: CallOptions): Promise<JobKindCount[]>;
    /** The `limit` (1–100, default 20) most recently updated jobs that failed or wait to retry, with their errors, newest first. */
    listRecentFailures(tenant: { tenantId?: string }, query?: { limit?: number }, options?: CallOptions): Promise<Job[]>;
  };
  /** The Anthropic-style memory tool over each user's `/memories` directory in this memory's store. */
  readonly memoryTool: MemoryTool;
  /** Read access to the same directories, for clients that list them (MCP resources). */
  readonly memoryFiles: MemoryFileReader;
  /**
   * The background work not done yet, of one tenant or (without `tenantId`) all: pending and running
   * jobs per kind and how long the oldest pending one has waited (for `/metrics` and `mnemo stats`).
   */
  jobBacklog(filter?: { tenantId?: string }, options?: CallOptions): Promise<JobBacklogStatus>;
  /** Runs the due background jobs now and returns how many ran (for tests, replays and CLIs). */
  runPendingJobs(): Promise<number>;
  /** The counter every stored message was counted with. */
  readonly tokenCounter: TokenCounter;
  /**
   * Whether the store can serve reads and writes now (`Store.checkReadiness`, else one read): for a
   * readiness probe, apart from the process being alive. Never throws for a failing store.
   */
  readiness(options?: CallOptions): Promise<StoreReadiness>;
  /** Stops the worker (its running job's lease lapses for another worker), waits for deferred writes and closes the store. */
  close(): Promise<void>;
}

/** Default deadline of the hybrid context's query embedding: 30 ms, about three USE-lite sentences on 2 cores. */
export const defaultQueryEmbeddingTimeoutMs = 30;

/** Wires a store, a token counter and the context builder into a {@link Memory}. */
export function createMemory(options: MemoryOptions): Memory {
  const { store } = options;
  const tokenCounter = options.tokenCounter ?? createGptTokenCounter();
  const limits: MessageLimits = Object.freeze({ ...defaultMessageLimits, ...options.limits });
  const contextDefaults = resolveContextDefaults(options.context);
  const now = options.now ?? Date.now;
  const compactor =
    options.compaction === false
      ? undefined
      : createCompactor({
          store,
          tokenCounter,
          summarizer: options.compaction?.summarizer ?? new ExtractiveSummarizer({ tokenCounter }),
          // The defaults follow the memory's default budget, so a bot that sends 1,000-token contexts
          // compacts for 1,000 tokens without saying so twice.
          settings: resolveCompactionSettings(options.compaction?.settings, compactionSettingsForBudget(contextDefaults.maxTokens)),
          now,
        });
  const knowledge =
    options.knowledge === false
      ? undefined
      : {
          store,
          factExtractor: options.knowledge?.factExtractor ?? new HeuristicFactExtractor(),
          ...(options.knowledge?.graphExtractor === false ? {} : { graphExtractor: options.knowledge?.graphExtractor ?? new HeuristicGraphExtractor() }),
          ...(options.knowledge?.consolidate === undefined ? {} : { consolidate: options.knowledge.consolidate }),
          now,
        };
  const background = createBackgroundWork({
    store,
    ...(knowledge === undefined ? {} : { extract: async (_job, scope, signal, slice) => void (await extractKnowledge(knowledge, scope, { signal, slice })) }),
    ...(compactor === undefined ? {} : { compactor }),
    ...(options.embedder === undefined ? {} : { embedder: options.embedder }),
    ...(options.worker === undefined ? {} : { worker: options.worker }),
    now,
  });
  const { worker } = background;
  const queryEmbeddingTimeoutMs = options.queryEmbeddingTimeoutMs ?? defaultQueryEmbeddingTimeoutMs;
  if (queryEmbeddingTimeoutMs !== false && (!Number.isInteger(queryEmbeddingTimeoutMs) || queryEmbeddingTimeoutMs < 1)) {
    throw new MemoryError('invalid_input', `queryEmbeddingTimeoutMs must be a positive integer or false (got ${String(queryEmbeddingTimeoutMs)})`, {
      details: { field: 'queryEmbeddingTimeoutMs' },
    });
  }
  const deferred = createDeferredWrites(options.onDeferredWriteError ?? (() => undefined));
  const contextDependencies = {
    store,
    deferWrite: deferred.defer,
    counter: tokenCounter,
    now,
    ...(options.embedder === undefined ? {} : { embedder: options.embedder }),
    ...(queryEmbeddingTimeoutMs === false ? {} : { queryEmbeddingTimeoutMs }),
  };

  const memoryTool = createMemoryTool({ store, now, ...(options.memoryToolLimits === undefined ? {} : { limits: options.memoryToolLimits }) });

  async function eraseSelected(target: UserScopeInput & MessageSelection, callOptions?: CallOptions): Promise<ErasureReceipt> {
    const { conversationId, fromSeq, toSeq, before, ...owner } = target;
    const selection = { ...(conversationId === undefined ? {} : { conversationId }), ...(fromSeq === undefined ? {} : { fromSeq }), ...(toSeq === undefined ? {} : { toSeq }), ...(before === undefined ? {} : { before }) };
    return eraseMessages({ store, now, afterErase: (scope, options) => background.afterAppend(scope, options) }, resolveUserScope(owner), selection, callOptions);
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
      return buildContext(contextDependencies, resolveScope(scopeInput), assertContextOptions(contextOptions, contextDefaults));
    },
    async listMessages(scopeInput: ScopeInput, range: MessageRange = {}, callOptions?: CallOptions) {
      return store.listMessages(resolveScope(scopeInput), range, callOptions);
    },
    async getConversation(scopeInput: ScopeInput, callOptions?: CallOptions) {
      return store.getConversation(resolveScope(scopeInput), callOptions);
    },
    async stats(scopeInput: ScopeInput, callOptions?: CallOptions) {
      await deferred.settled();
      return getConversationStats(store, resolveScope(scopeInput), callOptions);
    },
    async updateConversation(scopeInput: ScopeInput, update: { metadata: Metadata }, callOptions?: CallOptions) {
      return store.updateConversationMetadata(resolveScope(scopeInput), update?.metadata, callOptions);
    },
    async listConversations(filter: { tenantId?: string; userId?: string; search?: string } = {}, page?: PageOptions, callOptions?: CallOptions) {
      const user = resolveUserScope(filter);
      const search = checkSearch(filter.search);
      return store.listConversations(
        { tenantId: user.tenantId, ...(filter.userId === undefined ? {} : { userId: user.userId }), ...(search === undefined ? {} : { search }) },
        page,
        callOptions,
      );
    },
    async listUsage(scopeInput: ScopeInput, page?: PageOptions, callOptions?: CallOptions) {
      await deferred.settled();
      return store.listUsage(resolveScope(scopeInput), page, callOptions);
    },
    async erase(target: EraseTarget, callOptions?: CallOptions) {
      return eraseTarget(store, target, callOptions);
    },
    eraseMessages: eraseSelected,
    async applyRetention(rules: RetentionRules, retentionOptions?: RetentionOptions) {
      return applyRetention({ store, eraseMessages: eraseSelected }, rules, new Date(now()).toISOString(), retentionOptions);
    },
    async erasures(filter: UserScopeInput & { allUsers?: boolean }, callOptions?: CallOptions) {
      const user = resolveUserScope(filter);
      return store.listErasures({ tenantId: user.tenantId, ...(filter.allUsers === true ? {} : { userId: user.userId }) }, callOptions);
    },
    async compact(scopeInput: ScopeInput, callOptions: CallOptions = {}) {
      if (compactor === undefined) throw new MemoryError('invalid_input', 'compaction is turned off for this memory');
      return compactor.compact(resolveScope(scopeInput), { force: true, ...callOptions });
    },
    async listSummaries(scopeInput: ScopeInput, callOptions?: CallOptions) {
      return store.listSummaries(resolveScope(scopeInput), callOptions);
    },
    async expand(user: UserScopeInput, summaryId: string, callOptions?: CallOptions) {
      return expandSummary(store, resolveUserScope(user), summaryId, callOptions);
    },
    async recall(user: UserScopeInput, query: string, recallOptions?: RecallOptions) {
      return recall({ store, ...(options.embedder === undefined ? {} : { embedder: options.embedder }) }, resolveUserScope(user), query, recallOptions);
    },
    facts: Object.freeze({
      list: (user: UserScopeInput, query: FactQuery = {}, callOptions?: CallOptions) =>
        store.listFacts(resolveUserScope(user), { now: new Date(now()).toISOString(), ...query }, callOptions),
      history: (user: UserScopeInput, query: Omit<FactQuery, 'includeHistory' | 'asOf'> = {}, callOptions?: CallOptions) =>
        store.listFacts(resolveUserScope(user), { ...query, includeHistory: true }, callOptions),
      retire: (user: UserScopeInput, factId: string, callOptions?: CallOptions) =>
        store.retireFact(resolveUserScope(user), factId, new Date(now()).toISOString(), callOptions),
      put: (user: UserScopeInput, fact: FactInput, callOptions?: CallOptions) =>
        putFact(store, resolveUserScope(user), fact, new Date(now()).toISOString(), callOptions),
      correct: (user: UserScopeInput, factId: string, correction: FactCorrection, callOptions?: CallOptions) =>
        correctFact(store, resolveUserScope(user), factId, correction, new Date(now()).toISOString(), callOptions),
      consolidate: (user: UserScopeInput, consolidateOptions?: ConsolidateOptions) =>
        consolidateFacts(store, resolveUserScope(user), new Date(now()).toISOString(), consolidateOptions),
      expire: async (user: UserScopeInput, factId: string, expiresAt: string | null, callOptions?: CallOptions) =>
        store.setFactExpiry(resolveUserScope(user), factId, expiresAt === null ? undefined : toIsoTime('expiresAt', expiresAt), callOptions),
    }),
    graph: Object.freeze({
      entities: (user: UserScopeInput, query: { query?: string; limit?: number } = {}, callOptions?: CallOptions) =>
        store.listEntities(resolveUserScope(user), query, callOptions),
      neighbours: (user: UserScopeInput, entity: string, depth = 1, callOptions: CallOptions & { includeHistory?: boolean } = {}) =>
        graphNeighbours(store, resolveUserScope(user), entity, depth, callOptions),
      relations: (user: UserScopeInput, query: { entityIds: readonly string[]; includeHistory?: boolean }, callOptions?: CallOptions) =>
        store.listRelations(resolveUserScope(user), query, callOptions),
    }),
    jobs: Object.freeze({
      countByKind: async (tenant: { tenantId?: string }, callOptions?: CallOptions) =>
        store.countJobsByKind({ tenantId: resolveUserScope({ tenantId: tenant.tenantId }).tenantId }, callOptions),
      listRecentFailures: async (tenant: { tenantId?: string }, query: { limit?: number } = {}, callOptions?: CallOptions) =>
        store.listFailedJobs({ tenantId: resolveUserScope({ tenantId: tenant.tenantId }).tenantId, limit: checkFailureLimit(query.limit) }, callOptions),
    }),
    async jobBacklog(filter: { tenantId?: string } = {}, callOptions?: CallOptions) {
      const backlog = await readJobBacklog(store, filter.tenantId === undefined ? {} : { tenantId: filter.tenantId }, callOptions);
      const oldest = backlog.oldestPendingCreatedAt;
      return oldest === undefined ? backlog : { ...backlog, oldestPendingAgeMs: Math.max(0, now() - Date.parse(oldest)) };
    },
    runPendingJobs: () => worker.drain(),
    async readiness(callOptions?: CallOptions): Promise<StoreReadiness> {
      if (store.checkReadiness !== undefined) return store.checkReadiness(callOptions);
      try {
        await store.listConversations({ tenantId: 'default' }, { limit: 1 }, callOptions);
        return { ready: true, checks: [{ name: 'read', ok: true }] };
      } catch (error) {
        return { ready: false, checks: [{ name: 'read', ok: false, message: error instanceof Error ? error.message : String(error) }] };
      }
    },
    async close() {
      await worker.stop();
      await deferred.settled();
      await store.close();
    },
  });
}

// Longest search text accepted: ids are short, and the text is matched inside every id of a tenant.
const maxSearchLength = 200;

function checkSearch(search: unknown): string | undefined {
  if (search === undefined) return undefined;
  if (typeof search !== 'string' || search.length > maxSearchLength) {
    throw new MemoryError('invalid_input', `search must be a string of at most ${maxSearchLength} characters`, { details: { field: 'search' } });
  }
  return search.trim() === '' ? undefined : search.trim();
}

function checkFailureLimit(limit: unknown): number {
  if (limit === undefined) return 20;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 100) {
    throw new MemoryError('invalid_input', 'limit must be an integer from 1 to 100', { details: { field: 'limit' } });
  }
  return limit;
}
