import type { NewSummary, Summary } from '../compaction/summary.js';
import { MemoryError } from '../errors/memory-error.js';
import type { Fact, FactQuery, NewFact } from '../facts/fact.js';
import type { MemoryFile, MemoryFileInfo } from '../files/memory-file.js';
import type { Entity, EntityInput, Relation, RelationInput } from '../graph/entity.js';
import type { Job, JobKindCount, LeaseRequest } from '../jobs/job.js';
import type { RoleCounts } from '../messages/conversation-metadata.js';
import type { Message, Metadata, NewMessage } from '../messages/message.js';
import type { Scope, UserScope } from '../messages/scope.js';
import type { MessageEmbedding, SearchHit, SearchOptions } from '../recall/search.js';
import type { UsageEntry, UsageRecord, UsageTotals } from '../usage/usage.js';
import type {
  CallOptions,
  Conversation,
  ConversationFilter,
  EraseResult,
  JobCompletion,
  JobFailure,
  JobLease,
  JobRequest,
  MemoryFileWrite,
  MessageRange,
  Page,
  PageOptions,
  Store,
  StoreReadiness,
} from './store.js';
import type { Awaitable, StoreComposition } from './store-parts.js';
import { checkMessageSelection, type ErasureAuditEntry, type ErasureReceipt, type EraseMessagesOptions, type MessageSelection } from './message-erasure.js';
import { resolveExportPageSize, type ExportRecordsOptions, type ImportRecordsOptions, type StoreRecord, type StoreRecordCounts } from './store-records.js';

/**
 * A {@link Store} composed of an adapter's parts ({@link StoreComposition}): each port method checks
 * that the store is open and the signal not aborted, runs the part's method, and wraps what it throws
 * with the composition's `toError`. Calls after `close()` or with an aborted signal are `unavailable`.
 * The SQL adapters extend it; their parts hold the SQL.
 */
export class ComposedStore implements Store {
  readonly #parts: StoreComposition;
  #closed = false;

  constructor(composition: StoreComposition) {
    this.#parts = composition;
  }

  async appendMessages(scope: Scope, messages: readonly NewMessage[], options?: CallOptions): Promise<Message[]> {
    return this.#run('appending messages', options, () => this.#parts.messages.appendMessages(scope, messages));
  }

  async listMessages(scope: Scope, range?: MessageRange, options?: CallOptions): Promise<Message[]> {
    return this.#run('listing messages', options, () => this.#parts.messages.listMessages(scope, range));
  }

  async getConversation(scope: Scope, options?: CallOptions): Promise<Conversation | undefined> {
    return this.#run('reading a conversation', options, () => this.#parts.messages.getConversation(scope));
  }

  async listConversations(filter: ConversationFilter, page?: PageOptions, options?: CallOptions): Promise<Page<Conversation>> {
    return this.#run('listing conversations', options, () => this.#parts.messages.listConversations(filter, page));
  }

  async updateConversationMetadata(scope: Scope, metadata: Metadata, options?: CallOptions): Promise<Conversation | undefined> {
    return this.#run('updating conversation metadata', options, () => this.#parts.messages.updateConversationMetadata(scope, metadata));
  }

  async countMessagesByRole(scope: Scope, options?: CallOptions): Promise<RoleCounts> {
    return this.#run('counting messages by role', options, () => this.#parts.messages.countMessagesByRole(scope));
  }

  async insertUsage(scope: Scope, record: UsageRecord, options?: CallOptions): Promise<void> {
    return this.#run('recording usage', options, () => this.#parts.messages.insertUsage(scope, record));
  }

  async getUsageTotals(scope: Scope, options?: CallOptions): Promise<UsageTotals> {
    return this.#run('summing usage', options, () => this.#parts.messages.getUsageTotals(scope));
  }

  async listUsage(scope: Scope, page?: PageOptions, options?: CallOptions): Promise<Page<UsageEntry>> {
    return this.#run('listing usage', options, () => this.#parts.messages.listUsage(scope, page));
  }

  async insertSummary(scope: Scope, summary: NewSummary, options: CallOptions & { expectedWatermark: number; expectedErasedMessages?: number }): Promise<Summary> {
    return this.#run('writing a summary', options, () => this.#parts.summaries.insertSummary(scope, summary, options.expectedWatermark, options.expectedErasedMessages));
  }

  async getLatestSummary(scope: Scope, options?: CallOptions): Promise<Summary | undefined> {
    return this.#run('reading the latest summary', options, () => this.#parts.summaries.getLatestSummary(scope));
  }

  async listSummaries(scope: Scope, options?: CallOptions): Promise<Summary[]> {
    return this.#run('listing summaries', options, () => this.#parts.summaries.listSummaries(scope));
  }

  async getSummary(user: UserScope, summaryId: string, options?: CallOptions): Promise<Summary | undefined> {
    return this.#run('reading a summary', options, () => this.#parts.summaries.getSummary(user, summaryId));
  }

  async enqueueJob(scope: Scope, request: JobRequest, options?: CallOptions): Promise<Job> {
    return this.#run('queueing a job', options, () => this.#parts.jobs.enqueueJob(scope, request));
  }

  async leaseJob(request: LeaseRequest, options?: CallOptions): Promise<Job | undefined> {
    return this.#run('leasing a job', options, () => this.#parts.jobs.leaseJob(request));
  }

  async completeJob(lease: JobLease, now: string, options?: CallOptions & JobCompletion): Promise<void> {
    return this.#run('completing a job', options, () => this.#parts.jobs.completeJob(lease, now, options?.warning));
  }

  async failJob(lease: JobLease, failure: JobFailure, options?: CallOptions): Promise<Job> {
    return this.#run('failing a job', options, () => this.#parts.jobs.failJob(lease, failure));
  }

  async listJobs(scope: Scope, options?: CallOptions): Promise<Job[]> {
    return this.#run('listing jobs', options, () => this.#parts.jobs.listJobs(scope));
  }

  async countJobsByKind(filter: { tenantId?: string }, options?: CallOptions): Promise<JobKindCount[]> {
    return this.#run('counting jobs by kind', options, () => this.#parts.jobs.countJobsByKind(filter.tenantId));
  }

  async listFailedJobs(filter: { tenantId?: string; limit: number }, options?: CallOptions): Promise<Job[]> {
    return this.#run('listing failed jobs', options, () => this.#parts.jobs.listFailedJobs(filter.tenantId, filter.limit));
  }

  async upsertEmbeddings(scope: Scope, model: string, embeddings: readonly MessageEmbedding[], options?: CallOptions): Promise<void> {
    return this.#run('storing vectors', options, () => this.#parts.search.upsertEmbeddings(scope, model, embeddings));
  }

  async listUnembeddedMessages(scope: Scope, model: string, limit: number, options?: CallOptions): Promise<Message[]> {
    return this.#run('listing messages without vectors', options, () => this.#parts.search.listUnembeddedMessages(scope, model, limit));
  }

  async deleteEmbeddings(filter: { tenantId: string; userId?: string; exceptModel?: string }, options?: CallOptions): Promise<number> {
    return this.#run('deleting vectors', options, () => this.#parts.search.deleteEmbeddings(filter));
  }

  async searchKeyword(user: UserScope, terms: readonly string[], options: SearchOptions, callOptions?: CallOptions): Promise<SearchHit[]> {
    return this.#run('searching by keyword', callOptions, () => this.#parts.search.searchKeyword(user, terms, options));
  }

  async searchVector(user: UserScope, model: string, vector: Float32Array, options: SearchOptions, callOptions?: CallOptions): Promise<SearchHit[]> {
    return this.#run('searching by vector', callOptions, () => this.#parts.search.searchVector(user, model, vector, options));
  }

  async insertFact(user: UserScope, fact: NewFact, options: CallOptions & { supersedes?: string } = {}): Promise<Fact> {
    return this.#run('storing a fact', options, () => this.#parts.knowledge.insertFact(user, fact, options.supersedes));
  }

  async retireFact(user: UserScope, factId: string, at: string, options: CallOptions & { supersededBy?: string } = {}): Promise<Fact> {
    return this.#run('retiring a fact', options, () => this.#parts.knowledge.retireFact(user, factId, at, options.supersededBy));
  }

  async setFactExpiry(user: UserScope, factId: string, expiresAt: string | undefined, options?: CallOptions): Promise<Fact> {
    return this.#run('setting when a fact expires', options, () => this.#parts.knowledge.setFactExpiry(user, factId, expiresAt));
  }

  async listFacts(user: UserScope, query: FactQuery = {}, options?: CallOptions): Promise<Fact[]> {
    return this.#run('listing facts', options, () => this.#parts.knowledge.listFacts(user, query));
  }

  async upsertEntity(user: UserScope, input: EntityInput, now: string, options?: CallOptions): Promise<Entity> {
    return this.#run('storing an entity', options, () => this.#parts.knowledge.upsertEntity(user, input, now));
  }

  async listEntities(user: UserScope, query: { query?: string; ids?: readonly string[]; limit?: number } = {}, options?: CallOptions): Promise<Entity[]> {
    return this.#run('listing entities', options, () => this.#parts.knowledge.listEntities(user, query));
  }

  async insertRelation(user: UserScope, input: RelationInput, now: string, options?: CallOptions): Promise<Relation> {
    return this.#run('storing a relation', options, () => this.#parts.knowledge.insertRelation(user, input, now));
  }

  async retireRelation(user: UserScope, relationId: string, at: string, options?: CallOptions): Promise<Relation> {
    return this.#run('retiring a relation', options, () => this.#parts.knowledge.retireRelation(user, relationId, at));
  }

  async listRelations(user: UserScope, query: { entityIds: readonly string[]; includeHistory?: boolean }, options?: CallOptions): Promise<Relation[]> {
    return this.#run('listing relations', options, () => this.#parts.knowledge.listRelations(user, query));
  }

  async getCursor(scope: Scope, name: string, options?: CallOptions): Promise<number> {
    return this.#run('reading a cursor', options, () => this.#parts.knowledge.getCursor(scope, name));
  }

  async advanceCursor(scope: Scope, name: string, expected: number, next: number, options?: CallOptions): Promise<void> {
    return this.#run('moving a cursor', options, () => this.#parts.knowledge.advanceCursor(scope, name, expected, next));
  }

  async getMemoryFile(user: UserScope, path: string, options?: CallOptions): Promise<MemoryFile | undefined> {
    return this.#run('reading a memory file', options, () => this.#parts.files.getMemoryFile(user, path));
  }

  async listMemoryFiles(user: UserScope, directory: string, options?: CallOptions): Promise<MemoryFileInfo[]> {
    return this.#run('listing memory files', options, () => this.#parts.files.listMemoryFiles(user, directory));
  }

  async putMemoryFile(user: UserScope, write: MemoryFileWrite, options?: CallOptions): Promise<MemoryFile> {
    return this.#run('writing a memory file', options, () => this.#parts.files.putMemoryFile(user, write));
  }

  async deleteMemoryFiles(user: UserScope, path: string, options?: CallOptions): Promise<number> {
    return this.#run('deleting memory files', options, () => this.#parts.files.deleteMemoryFiles(user, path));
  }

  async renameMemoryFiles(user: UserScope, from: string, to: string, now: string, options?: CallOptions): Promise<number> {
    return this.#run('renaming memory files', options, () => this.#parts.files.renameMemoryFiles(user, from, to, now));
  }

  async deleteConversation(scope: Scope, options?: CallOptions): Promise<EraseResult> {
    return this.#run('erasing a conversation', options, () => this.#parts.deleteConversation(scope));
  }

  async deleteUser(user: UserScope, options?: CallOptions): Promise<EraseResult> {
    return this.#run('erasing a user', options, () => this.#parts.deleteUser(user));
  }

  async eraseMessages(user: UserScope, selection: MessageSelection, options: CallOptions & EraseMessagesOptions): Promise<ErasureReceipt> {
    const checked = checkMessageSelection(selection);
    const erase: EraseMessagesOptions = { now: options.now, ...(options.memoryFiles === undefined ? {} : { memoryFiles: options.memoryFiles }) };
    return this.#run('erasing messages', options, () => this.#parts.eraseMessages(user, checked, erase));
  }

  async listErasures(filter: { tenantId: string; userId?: string }, options?: CallOptions): Promise<ErasureAuditEntry[]> {
    return this.#run('listing erasures', options, () => this.#parts.listErasures(filter));
  }

  async *exportRecords(options: ExportRecordsOptions = {}): AsyncIterable<StoreRecord[]> {
    const pageSize = resolveExportPageSize(options.pageSize);
    this.#check('exporting records', options);
    try {
      yield* this.#parts.transfer.exportRecords(pageSize);
    } catch (error) {
      throw this.#parts.toError(error, 'exporting records');
    }
  }

  async importRecords(records: AsyncIterable<readonly StoreRecord[]> | Iterable<readonly StoreRecord[]>, options: ImportRecordsOptions = {}): Promise<StoreRecordCounts> {
    return this.#run('importing records', options, () => this.#parts.transfer.importRecords(records, options.replace === true));
  }

  /**
   * What the store can do now: the adapter's checks (SQLite: a write, the disk's free space, corruption
   * seen; PostgreSQL: a read and whether the server takes writes), else one read. Never throws for a
   * failing store: the failure is the answer (`ready: false` and the check that failed).
   */
  async checkReadiness(options?: CallOptions): Promise<StoreReadiness> {
    try {
      this.#check('checking readiness', options);
      if (this.#parts.checkReadiness !== undefined) return await this.#parts.checkReadiness();
      await this.#parts.messages.listConversations({ tenantId: 'default' }, { limit: 1 });
      return { ready: true, checks: [{ name: 'read', ok: true }] };
    } catch (error) {
      const wrapped = this.#parts.toError(error, 'checking readiness');
      return { ready: false, checks: [{ name: 'read', ok: false, message: wrapped.message }] };
    }
  }

  /** Releases the connection or pool; closing twice is not an error. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#parts.closeConnection();
  }

  async #run<T>(action: string, options: CallOptions | undefined, body: () => Awaitable<T>): Promise<T> {
    this.#check(action, options);
    let retry = false;
    // An attempt the adapter runs again checks again: the store may have closed, the signal aborted, meanwhile.
    const attempt = () => {
      if (retry) this.#check(action, options);
      retry = true;
      return body();
    };
    try {
      return await (this.#parts.runCall === undefined ? attempt() : this.#parts.runCall(action, attempt));
    } catch (error) {
      throw this.#parts.toError(error, action);
    }
  }

  #check(action: string, options: CallOptions | undefined): void {
    if (this.#closed) throw new MemoryError('unavailable', `${action} failed: the store is closed`);
    const signal = options?.signal;
    // A statement, once started, runs to its end whatever the caller does next (a synchronous driver
    // cannot be interrupted; a server finishes what it was sent), so the signal is honoured before
    // starting, which is the only point where aborting changes nothing stored.
    if (signal?.aborted === true) {
      throw new MemoryError('unavailable', `${action} was aborted`, { cause: signal.reason, details: { aborted: true } });
    }
  }
}
