import type { NewSummary, Summary } from '../compaction/summary.js';
import type { Fact, FactQuery, NewFact } from '../facts/fact.js';
import type { MemoryFile, MemoryFileInfo } from '../files/memory-file.js';
import type { Entity, EntityInput, Relation, RelationInput } from '../graph/entity.js';
import type { MessageEmbedding, SearchHit, SearchOptions } from '../recall/search.js';
import type { Job, JobKind, JobKindCount, LeaseRequest } from '../jobs/job.js';
import type { Message, Metadata, NewMessage } from '../messages/message.js';
import type { Scope, UserScope } from '../messages/scope.js';
import type { UsageEntry, UsageRecord, UsageTotals } from '../usage/usage.js';
import type { RoleCounts } from '../messages/conversation-metadata.js';
import type { ExportRecordsOptions, ImportRecordsOptions, StoreRecord, StoreRecordCounts } from './store-records.js';
import type { ErasureAuditEntry, ErasureReceipt, EraseMessagesOptions, MessageSelection } from './message-erasure.js';

/** A conversation's row: created by its first append, counters kept by the store in the same transaction. */
export interface Conversation {
  readonly tenantId: string;
  readonly userId: string;
  readonly conversationId: string;
  /** ISO 8601 time of the first append. */
  readonly createdAt: string;
  /** ISO 8601 time of the last append. */
  readonly updatedAt: string;
  /** The last `seq` given: messages stored, plus `erasedMessages` when some were erased (seqs are gapless from 1 until an erase). */
  readonly messageCount: number;
  /** Messages erased one by one or by range (`Store.eraseMessages`); absent while none were. Their seqs are never given again. */
  readonly erasedMessages?: number;
  /** Sum of the stored messages' `tokens`: what sending the whole history costs, before request overhead. */
  readonly totalTokens: number;
  /** Watermark: messages 1…this seq are covered by the latest summary; 0 before the first compaction. */
  readonly summarizedThroughSeq: number;
  /** Sum of the `tokens` of messages 1…`summarizedThroughSeq`. */
  readonly summarizedTokens: number;
  /** The caller's JSON object about the conversation (`Store.updateConversationMetadata`); `undefined` until set. mnemo never interprets it. */
  readonly metadata: Metadata | undefined;
}

/** One page of a cursor-paged listing; `nextCursor` is absent on the last page. */
export interface Page<T> {
  readonly items: readonly T[];
  readonly nextCursor?: string;
}

/** Options of a cursor-paged listing. */
export interface PageOptions {
  /** Opaque cursor from the previous page's `nextCursor`. */
  readonly cursor?: string;
  /** Page size, 1–1000; default 100. */
  readonly limit?: number;
}

/** Which messages of a conversation to read: a seq range, a direction and a count. */
export interface MessageRange {
  /** Only messages with `seq > afterSeq`. */
  readonly afterSeq?: number;
  /** Only messages with `seq < beforeSeq`. */
  readonly beforeSeq?: number;
  /** Most messages to return; default all. */
  readonly limit?: number;
  /** `asc` (oldest first, default) or `desc` (newest first). */
  readonly order?: 'asc' | 'desc';
}

/** The tenant (and, optionally, the one user) whose conversations to list. */
export interface ConversationFilter {
  readonly tenantId: string;
  readonly userId?: string;
  /** Keeps only conversations whose user id or conversation id contains this text, ignoring ASCII case. */
  readonly search?: string;
}

/** What an erase removed. */
export interface EraseResult {
  readonly conversations: number;
  readonly messages: number;
}

/** Options every store call accepts. */
export interface CallOptions {
  readonly signal?: AbortSignal;
}

/** What to enqueue: the kind of job, when it may run (ISO 8601), and how many leases it may take. */
export interface JobRequest {
  readonly kind: JobKind;
  readonly runAt: string;
  readonly maxAttempts: number;
}

/** How an attempt failed; with `retryAt` the job waits until then, without it the job is given up. */
export interface JobFailure {
  readonly error: string;
  readonly now: string;
  readonly retryAt?: string;
}

/** A write of a memory file; `expectedVersion` 0 means "create only", n means "only over version n", absent means upsert. */
export interface MemoryFileWrite {
  readonly path: string;
  readonly content: string;
  readonly now: string;
  readonly expectedVersion?: number;
}

/** How a job finished: `warning` says it finished degraded (a summary from the fallback summarizer) and is kept as its `lastError`. */
export interface JobCompletion {
  readonly warning?: string;
}

/** The lease a worker holds on a job: completing or failing it needs both. */
export type JobLease = Pick<Job, 'id' | 'leaseOwner'>;

/** One check of {@link StoreReadiness}: e.g. `read`, `write`, `disk`, `integrity`. */
export interface ReadinessCheck {
  readonly name: string;
  readonly ok: boolean;
  /** Why it failed (or a figure worth showing, such as the free space), in words for an operator. */
  readonly message?: string;
}

/** Whether a store can serve reads and writes now, check by check; `ready` is true when every check is. */
export interface StoreReadiness {
  readonly ready: boolean;
  readonly checks: readonly ReadinessCheck[];
}

/**
 * The storage port every adapter implements. Every method is scoped by tenant; an adapter must never
 * read or write a row of another tenant (the job queue is the one cross-tenant reader: a worker leases
 * jobs of every tenant and then works inside the job's scope). Failures are `MemoryError`s:
 * `storage_failed` wrapping the driver error, `unavailable` (closed, aborted, or busy past a timeout;
 * retryable), `conflict`, `not_found`, `invalid_input`. No method returns empty data in place of an error.
 */
export interface Store {
  /**
   * Appends messages to a conversation, creating it on first use, in one transaction: each gets the
   * next gapless `seq`. A message whose `idempotencyKey` is already stored in the conversation is not
   * stored again; the stored one is returned in its place (`conflict` if role or content differ).
   * Safe under concurrent callers, in one process or many. Returns the messages in input order.
   */
  appendMessages(scope: Scope, messages: readonly NewMessage[], options?: CallOptions): Promise<Message[]>;
  /** Reads messages of one conversation in seq order; an unknown conversation has none. */
  listMessages(scope: Scope, range?: MessageRange, options?: CallOptions): Promise<Message[]>;
  /** The conversation's row, or `undefined` when it has no messages. */
  getConversation(scope: Scope, options?: CallOptions): Promise<Conversation | undefined>;
  /** Conversations of a tenant (or one of its users), ordered by user id then conversation id. */
  listConversations(filter: ConversationFilter, page?: PageOptions, options?: CallOptions): Promise<Page<Conversation>>;
  /**
   * Replaces the conversation's metadata object whole (a caller that merges reads, merges and writes; the
   * last write wins) and returns the updated row; `undefined` when the conversation does not exist, which
   * this never creates. Leaves `updatedAt` (the last append) alone. `invalid_input` unless `metadata` is a
   * plain JSON object of at most 16,384 characters of JSON (`checkConversationMetadata`).
   */
  updateConversationMetadata(scope: Scope, metadata: Metadata, options?: CallOptions): Promise<Conversation | undefined>;
  /** How many stored messages of each role the conversation has; roles without messages are absent, `{}` for an unknown conversation. */
  countMessagesByRole(scope: Scope, options?: CallOptions): Promise<RoleCounts>;
  /** Records one entry of the usage ledger (what a context build or a model call cost). */
  insertUsage(scope: Scope, record: UsageRecord, options?: CallOptions): Promise<void>;
  /** Sums the usage ledger of one conversation. */
  getUsageTotals(scope: Scope, options?: CallOptions): Promise<UsageTotals>;
  /** The usage ledger of one conversation, entry by entry in the order written, cursor-paged. */
  listUsage(scope: Scope, page?: PageOptions, options?: CallOptions): Promise<Page<UsageEntry>>;
  /**
   * Stores a new summary version and moves the conversation's watermark to `summary.toSeq`, in one
   * transaction, together with a `summarize` usage entry for its cost. `conflict` when the watermark is
   * no longer `expectedWatermark` (another worker compacted first: nothing is written); `not_found`
   * without the conversation; `invalid_input` when `toSeq` is behind the watermark or past the last message.
   * With `expectedErasedMessages`, also `conflict` when the conversation's `erasedMessages` (0 when absent)
   * is no longer that: messages were erased since the caller read them, so its summary may hold their text.
   */
  insertSummary(scope: Scope, summary: NewSummary, options: CallOptions & { expectedWatermark: number; expectedErasedMessages?: number }): Promise<Summary>;
  /** The most recently written summary of a conversation (the one the watermark points at). */
  getLatestSummary(scope: Scope, options?: CallOptions): Promise<Summary | undefined>;
  /** Every summary version of a conversation, oldest first. */
  listSummaries(scope: Scope, options?: CallOptions): Promise<Summary[]>;
  /** One summary by id, only within the user's own conversations. */
  getSummary(user: UserScope, summaryId: string, options?: CallOptions): Promise<Summary | undefined>;
  /**
   * Queues a job on a conversation. A pending job of the same kind on the same conversation absorbs the
   * request (it is returned instead), so bursts of appends queue one job; a running job does not, since it
   * may have planned before the newest messages.
   */
  enqueueJob(scope: Scope, request: JobRequest, options?: CallOptions): Promise<Job>;
  /**
   * Leases the oldest due job (pending with `runAt` ≤ now, or running with an expired lease) to one
   * worker, atomically across processes, counting an attempt. A job whose lease expired after its last
   * allowed attempt is marked failed instead. `undefined` when nothing is due.
   */
  leaseJob(request: LeaseRequest, options?: CallOptions): Promise<Job | undefined>;
  /** Marks a leased job done; `conflict` when the caller no longer holds the lease. */
  completeJob(lease: JobLease, now: string, options?: CallOptions & JobCompletion): Promise<void>;
  /** Records a failed attempt (retry at `retryAt`, or given up); `conflict` when the caller no longer holds the lease. */
  failJob(lease: JobLease, failure: JobFailure, options?: CallOptions): Promise<Job>;
  /** Jobs of one conversation, oldest first. */
  listJobs(scope: Scope, options?: CallOptions): Promise<Job[]>;
  /** Jobs by kind and status with the time the oldest of each was queued, for one tenant or all; by kind, then status. */
  countJobsByKind(filter: { tenantId?: string }, options?: CallOptions): Promise<JobKindCount[]>;
  /** The `limit` most recently updated jobs that carry an error and are not done (given up, or waiting to retry), newest first. */
  listFailedJobs(filter: { tenantId?: string; limit: number }, options?: CallOptions): Promise<Job[]>;
  /** One memory file of a user, or `undefined`. Paths must be normalized (`normalizeMemoryPath`). */
  getMemoryFile(user: UserScope, path: string, options?: CallOptions): Promise<MemoryFile | undefined>;
  /** The user's files at `directory` or under it, by path, without content. */
  listMemoryFiles(user: UserScope, directory: string, options?: CallOptions): Promise<MemoryFileInfo[]>;
  /** Writes a file (version + 1); `conflict` when `expectedVersion` does not match what is stored. */
  putMemoryFile(user: UserScope, write: MemoryFileWrite, options?: CallOptions): Promise<MemoryFile>;
  /** Deletes the file at `path` and every file under it as a directory; returns how many. */
  deleteMemoryFiles(user: UserScope, path: string, options?: CallOptions): Promise<number>;
  /**
   * Moves the file at `from`, or every file under it as a directory, to `to`, in one transaction;
   * `not_found` when nothing is at `from`, `conflict` when anything already is at `to`. Returns how many moved.
   */
  renameMemoryFiles(user: UserScope, from: string, to: string, now: string, options?: CallOptions): Promise<number>;
  /** Stores (or replaces) vectors of messages of one conversation, made by `model`. */
  upsertEmbeddings(scope: Scope, model: string, embeddings: readonly MessageEmbedding[], options?: CallOptions): Promise<void>;
  /** Messages of a conversation with no vector of `model` yet, oldest first, at most `limit`. */
  listUnembeddedMessages(scope: Scope, model: string, limit: number, options?: CallOptions): Promise<Message[]>;
  /** Deletes a tenant's (or one user's) vectors of every model but `exceptModel` (all without it); returns how many. */
  deleteEmbeddings(filter: { tenantId: string; userId?: string; exceptModel?: string }, options?: CallOptions): Promise<number>;
  /**
   * Keyword search over one user's messages: any of `terms` (from `keywordTerms`), ranked by BM25 with
   * the adapter's stemming; ties by newest first. Scores are higher-is-better.
   */
  searchKeyword(user: UserScope, terms: readonly string[], options: SearchOptions, callOptions?: CallOptions): Promise<SearchHit[]>;
  /** Nearest messages of one user to `vector` among vectors of `model`, by cosine similarity (best first). */
  searchVector(user: UserScope, model: string, vector: Float32Array, options: SearchOptions, callOptions?: CallOptions): Promise<SearchHit[]>;
  /**
   * Stores a fact. With `supersedes`, in the same transaction the old fact gets `validTo` (the new
   * fact's `validFrom`) and `supersededBy`; `conflict` when the old one is no longer current, `not_found` when absent.
   */
  insertFact(user: UserScope, fact: NewFact, options?: CallOptions & { supersedes?: string }): Promise<Fact>;
  /**
   * Ends a current fact at `at`; with `supersededBy`, links it to the user's fact that takes its place (a
   * consolidation merging a duplicate or settling a contradiction). `not_found` (the fact or the
   * successor) / `conflict` (already ended).
   */
  retireFact(user: UserScope, factId: string, at: string, options?: CallOptions & { supersededBy?: string }): Promise<Fact>;
  /** Sets when a current fact expires (ISO 8601), or with `undefined` that it never does; `not_found` / `conflict` (already ended). */
  setFactExpiry(user: UserScope, factId: string, expiresAt: string | undefined, options?: CallOptions): Promise<Fact>;
  /** A user's facts: current by default, valid at `asOf`, or every version with `includeHistory`; oldest first. */
  listFacts(user: UserScope, query?: FactQuery, options?: CallOptions): Promise<Fact[]>;
  /** Inserts an entity, or merges it (type, new aliases, description) into the one with the same name or alias, case-insensitively. */
  upsertEntity(user: UserScope, input: EntityInput, now: string, options?: CallOptions): Promise<Entity>;
  /** A user's entities, by name; `query` matches a name or alias prefix, case-insensitively. */
  listEntities(user: UserScope, query?: { query?: string; ids?: readonly string[]; limit?: number }, options?: CallOptions): Promise<Entity[]>;
  /** Stores a relation; an identical current relation (subject, predicate, object) is returned instead of duplicated. */
  insertRelation(user: UserScope, input: RelationInput, now: string, options?: CallOptions): Promise<Relation>;
  /** Ends a current relation at `at`; `not_found` / `conflict`. */
  retireRelation(user: UserScope, relationId: string, at: string, options?: CallOptions): Promise<Relation>;
  /** Relations whose subject or object is one of `entityIds`: current ones, or all with `includeHistory`. */
  listRelations(user: UserScope, query: { entityIds: readonly string[]; includeHistory?: boolean }, options?: CallOptions): Promise<Relation[]>;
  /** A named progress mark of a conversation's background work (e.g. facts extracted through seq N); 0 when unset. */
  getCursor(scope: Scope, name: string, options?: CallOptions): Promise<number>;
  /** Moves a progress mark from `expected` to `next`; `conflict` when it is no longer `expected` (another worker moved it). */
  advanceCursor(scope: Scope, name: string, expected: number, next: number, options?: CallOptions): Promise<void>;
  /**
   * Every row of the store, all tenants, as pages of {@link StoreRecord}s in dependency order (conversations,
   * messages, usage, summaries, cursors, facts, entities, relations, memory files), each table in the order
   * written, all read from one consistent snapshot that stays open until the iteration ends. Jobs and
   * vectors are not exported. On SQLite the snapshot is a read transaction on the store's connection: do not
   * write through the same store while iterating.
   */
  exportRecords(options?: ExportRecordsOptions): AsyncIterable<StoreRecord[]>;
  /**
   * Writes exported records into this store in one transaction, keeping ids, seqs, times and links, and
   * returns the rows per table the store holds afterwards; all or nothing. A store that holds rows is
   * refused (`invalid_input`, field `replace`) unless `replace`, which first deletes everything (jobs and
   * vectors too) in the same transaction. Derived search data is rebuilt from the messages.
   */
  importRecords(records: AsyncIterable<readonly StoreRecord[]> | Iterable<readonly StoreRecord[]>, options?: ImportRecordsOptions): Promise<StoreRecordCounts>;
  /** Erases a conversation: its row, messages, vectors, summaries, jobs, cursors and usage entries. Erasing twice is not an error. */
  deleteConversation(scope: Scope, options?: CallOptions): Promise<EraseResult>;
  /** Erases everything of one user of one tenant: conversations and all that hangs on them (vectors, cursors), facts, entities, relations and memory files. */
  deleteUser(user: UserScope, options?: CallOptions): Promise<EraseResult>;
  /**
   * Optional: whether the store can serve reads and writes now (readiness, as opposed to the process
   * being alive). Never throws for a failing store; the failure is in the answer. Without it a caller
   * tries one read.
   */
  checkReadiness?(options?: CallOptions): Promise<StoreReadiness>;
  /**
   * Erases some of a user's messages (one, a seq range, or those before a time; {@link MessageSelection})
   * in one transaction, with everything derived from them: their vectors of every model, every summary
   * that covered one (the watermark goes back to the newest summary left, so compaction folds what remains
   * again), the facts and relations whose every source was erased (others lose the erased sources), and the
   * entities only those relations named; the conversations' counters drop the erased tokens and count the
   * erased messages. Writes an audit entry with the selection and the counts, never the content, and
   * returns the receipt. Stores that can make the file itself forget the bytes do so (SQLite: secure
   * delete and a WAL checkpoint). Erasing what is not there is not an error (a receipt of zeros).
   * `invalid_input` for a bad selection.
   */
  eraseMessages(user: UserScope, selection: MessageSelection, options: CallOptions & EraseMessagesOptions): Promise<ErasureReceipt>;
  /** The audit log of erasures of a tenant (or one user), oldest first: selection, time and counts. */
  listErasures(filter: { tenantId: string; userId?: string }, options?: CallOptions): Promise<ErasureAuditEntry[]>;
  /** Releases connections and files. Calls after `close` fail with `unavailable`. */
  close(): Promise<void>;
}
