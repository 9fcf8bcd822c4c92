import type { Summary } from '../compaction/summary.js';
import type { ContextOptions } from '../context/context-options.js';
import type { BuiltContext } from '../context/context-types.js';
import type { ConsolidateOptions, FactConsolidation } from '../facts/consolidate-facts.js';
import type { Fact, FactQuery } from '../facts/fact.js';
import type { FactCorrection, FactInput } from '../facts/put-fact.js';
import type { MemoryFileReader } from '../files/memory-file-reader.js';
import type { MemoryTool } from '../files/memory-tool.js';
import type { Entity, Relation } from '../graph/entity.js';
import type { GraphNeighbourhood } from '../graph/graph-neighbours.js';
import type { Job, JobBacklogStatus, JobKindCount } from '../jobs/job.js';
import type { EraseTarget } from '../messages/erase-target.js';
import type { Message, MessageInput, Metadata } from '../messages/message.js';
import type { ScopeInput, UserScopeInput } from '../messages/scope.js';
import type { RecallHit, RecallOptions, RecallSearch } from '../recall/recall.js';
import type { ErasureAuditEntry, ErasureReceipt, MessageSelection } from '../store/message-erasure.js';
import type {
  CallOptions,
  Conversation,
  EraseResult,
  MessageRange,
  Page,
  PageOptions,
  StoreReadiness,
} from '../store/store.js';
import type { TokenCounter } from '../tokens/token-counter.js';
import type { UsageEntry } from '../usage/usage.js';
import type { RetentionOptions, RetentionOutcome, RetentionRules } from './apply-retention.js';
import type { ConversationStats } from './conversation-stats.js';
import type { ExpandedSummary } from './expand-summary.js';

/** The memory engine a library user calls. Every method validates its input (`invalid_input`). */
export interface Memory {
  /** Appends one message or a batch, atomically and in order; returns them as stored (with `seq`). */
  append(
    scope: ScopeInput,
    messages: MessageInput | readonly MessageInput[],
    options?: CallOptions,
  ): Promise<Message[]>;
  /** Builds the context to send for a conversation and records it in the usage ledger. */
  buildContext(scope: ScopeInput, options?: ContextOptions): Promise<BuiltContext>;
  /** Reads stored messages of a conversation: oldest first by default; `afterSeq`, `beforeSeq`, `limit` and `order: 'desc'` (newest first) to page or read the tail. */
  listMessages(scope: ScopeInput, range?: MessageRange, options?: CallOptions): Promise<Message[]>;
  /** The conversation's row (counters, watermark, metadata) in one read; `undefined` when it has no messages. */
  getConversation(scope: ScopeInput, options?: CallOptions): Promise<Conversation | undefined>;
  /** Counters and usage of one conversation; `undefined` when it has no messages. */
  stats(scope: ScopeInput, options?: CallOptions): Promise<ConversationStats | undefined>;
  /** Replaces a conversation's metadata whole (merge before calling); `undefined` when the conversation has no messages. `invalid_input` as `Store.updateConversationMetadata`. */
  updateConversation(
    scope: ScopeInput,
    update: { metadata: Metadata },
    options?: CallOptions,
  ): Promise<Conversation | undefined>;
  /** Conversations of a tenant, or of one of its users, cursor-paged; `search` keeps those whose user or conversation id contains it (ASCII case ignored). */
  listConversations(
    filter?: { tenantId?: string; userId?: string; search?: string },
    page?: PageOptions,
    options?: CallOptions,
  ): Promise<Page<Conversation>>;
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
  /**
   * `recall` as a context recalls, for a server answering a request: under the memory's query embedding
   * deadline, a failed query embedding making it keyword-only (`onQueryEmbeddingError`) instead of an
   * error, and saying how it searched (`mode`, `reason`, `model`). `recall` waits for the embedding and throws.
   */
  searchRecall(scope: UserScopeInput, query: string, options?: RecallOptions): Promise<RecallSearch>;
  /** The user's facts: current by default, `asOf` a date, or history; and ending one by hand. */
  readonly facts: {
    list(user: UserScopeInput, query?: FactQuery, options?: CallOptions): Promise<Fact[]>;
    history(
      user: UserScopeInput,
      query?: Omit<FactQuery, 'includeHistory' | 'asOf'>,
      options?: CallOptions,
    ): Promise<Fact[]>;
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
    entities(
      user: UserScopeInput,
      query?: { query?: string; limit?: number },
      options?: CallOptions,
    ): Promise<Entity[]>;
    /** An entity (by id, name or alias) and everything within `depth` (1–3) relations of it; `not_found` for an unknown one. */
    neighbours(
      user: UserScopeInput,
      entity: string,
      depth?: number,
      options?: CallOptions & { includeHistory?: boolean },
    ): Promise<GraphNeighbourhood>;
    /** Relations whose subject or object is one of `entityIds` (current ones, or all with `includeHistory`), with their source messages. */
    relations(
      user: UserScopeInput,
      query: { entityIds: readonly string[]; includeHistory?: boolean },
      options?: CallOptions,
    ): Promise<Relation[]>;
  };
  /** The background job queue of one tenant, as the inspector shows it. */
  readonly jobs: {
    /** Jobs by kind and status, with when the oldest of each was queued; by kind, then status. */
    countByKind(tenant: { tenantId?: string }, options?: CallOptions): Promise<JobKindCount[]>;
    /** The `limit` (1–100, default 20) most recently updated jobs that failed or wait to retry, with their errors, newest first. */
    listRecentFailures(
      tenant: { tenantId?: string },
      query?: { limit?: number },
      options?: CallOptions,
    ): Promise<Job[]>;
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
