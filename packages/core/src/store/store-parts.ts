import type { StoreRecord, StoreRecordCounts } from './store-records.js';
import type { NewSummary, Summary } from '../compaction/summary.js';
import type { Fact, FactQuery, NewFact } from '../facts/fact.js';
import type { MemoryFile, MemoryFileInfo } from '../files/memory-file.js';
import type { Entity, EntityInput, Relation, RelationInput } from '../graph/entity.js';
import type { Job, JobKindCount, LeaseRequest } from '../jobs/job.js';
import type { RoleCounts } from '../messages/conversation-metadata.js';
import type { Message, Metadata, NewMessage } from '../messages/message.js';
import type { Scope, UserScope } from '../messages/scope.js';
import type { MessageEmbedding, SearchHit, SearchOptions } from '../recall/search.js';
import type { UsageEntry, UsageRecord, UsageTotals } from '../usage/usage.js';
import type { ErasureAuditEntry, ErasureReceipt, EraseMessagesOptions, MessageSelection } from './message-erasure.js';
import type { Conversation, ConversationFilter, EraseResult, JobFailure, JobLease, JobRequest, MemoryFileWrite, MessageRange, Page, PageOptions, StoreReadiness } from './store.js';

/** A result a part returns directly (a synchronous driver) or as a promise. */
export type Awaitable<T> = T | Promise<T>;

// The parts a SQL adapter splits its Store into, one per group of tables. Their methods are the port's
// without the call options: the composed store honours the signal and wraps driver errors around them.

/** Conversations, messages and the usage ledger. */
export interface MessageStorePart {
  appendMessages(scope: Scope, messages: readonly NewMessage[]): Awaitable<Message[]>;
  listMessages(scope: Scope, range?: MessageRange): Awaitable<Message[]>;
  getConversation(scope: Scope): Awaitable<Conversation | undefined>;
  listConversations(filter: ConversationFilter, page?: PageOptions): Awaitable<Page<Conversation>>;
  updateConversationMetadata(scope: Scope, metadata: Metadata): Awaitable<Conversation | undefined>;
  countMessagesByRole(scope: Scope): Awaitable<RoleCounts>;
  insertUsage(scope: Scope, record: UsageRecord): Awaitable<void>;
  getUsageTotals(scope: Scope): Awaitable<UsageTotals>;
  listUsage(scope: Scope, page?: PageOptions): Awaitable<Page<UsageEntry>>;
}

/** Summaries and the watermark they move. */
export interface SummaryStorePart {
  insertSummary(scope: Scope, summary: NewSummary, expectedWatermark: number, expectedErasedMessages?: number): Awaitable<Summary>;
  getLatestSummary(scope: Scope): Awaitable<Summary | undefined>;
  listSummaries(scope: Scope): Awaitable<Summary[]>;
  getSummary(user: UserScope, summaryId: string): Awaitable<Summary | undefined>;
}

/** The job queue. */
export interface JobStorePart {
  enqueueJob(scope: Scope, request: JobRequest): Awaitable<Job>;
  leaseJob(request: LeaseRequest): Awaitable<Job | undefined>;
  completeJob(lease: JobLease, now: string, warning: string | undefined): Awaitable<void>;
  failJob(lease: JobLease, failure: JobFailure): Awaitable<Job>;
  listJobs(scope: Scope): Awaitable<Job[]>;
  countJobsByKind(tenantId: string | undefined): Awaitable<JobKindCount[]>;
  listFailedJobs(tenantId: string | undefined, limit: number): Awaitable<Job[]>;
}

/** Vectors and keyword search. */
export interface SearchStorePart {
  upsertEmbeddings(scope: Scope, model: string, embeddings: readonly MessageEmbedding[]): Awaitable<void>;
  listUnembeddedMessages(scope: Scope, model: string, limit: number): Awaitable<Message[]>;
  deleteEmbeddings(filter: { tenantId: string; userId?: string; exceptModel?: string }): Awaitable<number>;
  searchKeyword(user: UserScope, terms: readonly string[], options: SearchOptions): Awaitable<SearchHit[]>;
  searchVector(user: UserScope, model: string, vector: Float32Array, options: SearchOptions): Awaitable<SearchHit[]>;
}

/** Facts, entities, relations and the extraction cursors. */
export interface KnowledgeStorePart {
  insertFact(user: UserScope, fact: NewFact, supersedes: string | undefined): Awaitable<Fact>;
  retireFact(user: UserScope, factId: string, at: string, supersededBy: string | undefined): Awaitable<Fact>;
  setFactExpiry(user: UserScope, factId: string, expiresAt: string | undefined): Awaitable<Fact>;
  listFacts(user: UserScope, query: FactQuery): Awaitable<Fact[]>;
  upsertEntity(user: UserScope, input: EntityInput, now: string): Awaitable<Entity>;
  listEntities(user: UserScope, query: { query?: string; ids?: readonly string[]; limit?: number }): Awaitable<Entity[]>;
  insertRelation(user: UserScope, input: RelationInput, now: string): Awaitable<Relation>;
  retireRelation(user: UserScope, relationId: string, at: string): Awaitable<Relation>;
  listRelations(user: UserScope, query: { entityIds: readonly string[]; includeHistory?: boolean }): Awaitable<Relation[]>;
  getCursor(scope: Scope, name: string): Awaitable<number>;
  advanceCursor(scope: Scope, name: string, expected: number, next: number): Awaitable<void>;
}

/** The memory-tool files. */
export interface FileStorePart {
  getMemoryFile(user: UserScope, path: string): Awaitable<MemoryFile | undefined>;
  listMemoryFiles(user: UserScope, directory: string): Awaitable<MemoryFileInfo[]>;
  putMemoryFile(user: UserScope, write: MemoryFileWrite): Awaitable<MemoryFile>;
  deleteMemoryFiles(user: UserScope, path: string): Awaitable<number>;
  renameMemoryFiles(user: UserScope, from: string, to: string, now: string): Awaitable<number>;
}

/** A whole store as records: the export's snapshot and the import's transaction (see `Store.exportRecords`). */
export interface TransferStorePart {
  exportRecords(pageSize: number): AsyncIterable<StoreRecord[]>;
  importRecords(records: AsyncIterable<readonly StoreRecord[]> | Iterable<readonly StoreRecord[]>, replace: boolean): Promise<StoreRecordCounts>;
}

/** What {@link ComposedStore} is built from: the parts, the two erases that span them, and the driver's edges. */
export interface StoreComposition {
  readonly messages: MessageStorePart;
  readonly summaries: SummaryStorePart;
  readonly jobs: JobStorePart;
  readonly search: SearchStorePart;
  readonly knowledge: KnowledgeStorePart;
  readonly files: FileStorePart;
  readonly transfer: TransferStorePart;
  /** Erases one conversation across the parts, in one transaction. */
  deleteConversation(scope: Scope): Awaitable<EraseResult>;
  /** Erases one user across the parts, in one transaction. */
  deleteUser(user: UserScope): Awaitable<EraseResult>;
  /** Erases some messages of a user and what was derived from them, in one transaction (`Store.eraseMessages`; the selection is checked). */
  eraseMessages(user: UserScope, selection: MessageSelection, options: EraseMessagesOptions): Awaitable<ErasureReceipt>;
  /** The audit log of erasures (`Store.listErasures`). */
  listErasures(filter: { tenantId: string; userId?: string }): Awaitable<ErasureAuditEntry[]>;
  /** Wraps an error a part threw (a `MemoryError` passes through) into the `MemoryError` the caller gets; `action` says what failed. */
  toError(error: unknown, action: string): Error;
  /** Releases the connection or pool; called once, by the first `close()`. Throws a `MemoryError`. */
  closeConnection(): Awaitable<void>;
  /**
   * Runs one call's attempt (which checks the store is open and the signal not aborted, then runs the
   * part): an adapter may run it again, e.g. SQLite after a short wait while another connection holds
   * the write lock, instead of waiting synchronously on the event loop. What it finally throws is
   * wrapped with `toError`. Default: the attempt once.
   */
  runCall?<T>(action: string, attempt: () => Awaitable<T>): Promise<T>;
  /** What the store can do now (see `Store.checkReadiness`); default: one read of the conversations. */
  checkReadiness?(): Awaitable<StoreReadiness>;
}
