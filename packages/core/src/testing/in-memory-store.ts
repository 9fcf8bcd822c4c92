import type { NewSummary, Summary } from '../compaction/summary.js';
import { isMemoryError, MemoryError } from '../errors/memory-error.js';
import { ComposedStore } from '../store-kit/composed-store.js';
import type { Job, JobKindCount, LeaseRequest } from '../jobs/job.js';
import type { Message, Metadata, NewMessage } from '../messages/message.js';
import type { Scope, UserScope } from '../messages/scope.js';
import { toUsageTotals, type UsageEntry, type UsageRecord, type UsageTotals } from '../usage/usage.js';
import type { Fact, FactQuery, NewFact } from '../facts/fact.js';
import type { MemoryFile, MemoryFileInfo } from '../files/memory-file.js';
import type { Entity, EntityInput, Relation, RelationInput } from '../graph/entity.js';
import {
  embeddingCounts,
  type EmbeddingCount,
  type MessageEmbedding,
  type SearchHit,
  type SearchOptions,
} from '../recall/search.js';
import { checkConversationMetadata, toRoleCounts, type RoleCounts } from '../messages/conversation-metadata.js';
import { InMemoryFactStore } from './in-memory-fact-store.js';
import { InMemoryGraphStore } from './in-memory-graph-store.js';
import { bm25Search, filterSearchable, vectorSearch, type SearchableMessage } from './in-memory-search.js';
import { InMemoryFileStore } from './in-memory-file-store.js';
import { InMemoryJobQueue } from './in-memory-job-queue.js';
import {
  decodeConversationCursor,
  decodePositionCursor,
  encodeConversationCursor,
  encodePositionCursor,
  resolvePageLimit,
} from '../store/page-cursor.js';
import { idempotencyConflict, isSameMessage } from '../messages/same-message.js';
import { checkSummaryRange } from '../compaction/summary-range.js';
import { namesOf } from '../graph/entity-rules.js';
import { checkRecords } from '../store/record-rows.js';
import { checkCount } from '../store/stored-values.js';
import {
  checkMessageSelection,
  erasedSourceConflict,
  planKnowledgeErasure,
  settleEntityNames,
  type ErasureAuditEntry,
  type ErasureCounts,
  type ErasureReceipt,
  type EraseMessagesOptions,
  type MessageSelection,
} from '../store/message-erasure.js';
import {
  countRecords,
  emptyRecordCounts,
  resolveExportPageSize,
  storeNotEmpty,
  totalRecordCount,
  type ExportRecordsOptions,
  type ImportRecordsOptions,
  type StoreRecord,
  type StoreRecordCounts,
} from '../store/store-records.js';
import type {
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
} from '../store/store.js';
// compareText is UTF-16 code unit order; it equals SQLite's BINARY (UTF-8 byte) order except for characters
// above U+FFFF compared with U+E000–U+FFFF, which ids in practice do not mix.
import { compareText } from '../text/compare-text.js';

interface ConversationState {
  conversation: Conversation;
  readonly messages: Message[];
  readonly byIdempotencyKey: Map<string, Message>;
  readonly usage: UsageRecord[];
  readonly summaries: Summary[];
  /** model → seq → vector */
  readonly embeddings: Map<string, Map<number, Float32Array>>;
  readonly cursors: Map<string, number>;
}

/** The parts of {@link InMemoryStore}: one object serves every concept port, over the same maps. */
class InMemoryParts {
  readonly #conversations = new Map<string, ConversationState>();
  readonly #jobs = new InMemoryJobQueue();
  readonly #files = new InMemoryFileStore();
  readonly #facts = new InMemoryFactStore();
  readonly #graph = new InMemoryGraphStore();
  readonly #erasures: ErasureAuditEntry[] = [];

  async appendMessages(scope: Scope, messages: readonly NewMessage[]): Promise<Message[]> {
    if (messages.length === 0) return [];
    const key = conversationKey(scope);
    let state = this.#conversations.get(key);
    // Validate every idempotency conflict before changing anything: a batch lands whole or not at all.
    const pending = new Map<string, NewMessage>();
    for (const message of messages) {
      if (message.idempotencyKey === undefined) continue;
      const earlier = state?.byIdempotencyKey.get(message.idempotencyKey) ?? pending.get(message.idempotencyKey);
      if (earlier !== undefined && !isSameMessage(earlier, message)) throw idempotencyConflict(message.idempotencyKey);
      pending.set(message.idempotencyKey, message);
    }
    if (state === undefined) {
      const now = messages[0]?.createdAt ?? new Date().toISOString();
      state = newConversationState({
        ...scope,
        createdAt: now,
        updatedAt: now,
        messageCount: 0,
        totalTokens: 0,
        summarizedThroughSeq: 0,
        summarizedTokens: 0,
        metadata: undefined,
      });
      this.#conversations.set(key, state);
    }
    const result: Message[] = [];
    for (const message of messages) {
      const existing =
        message.idempotencyKey === undefined ? undefined : state.byIdempotencyKey.get(message.idempotencyKey);
      if (existing !== undefined) {
        result.push(existing);
        continue;
      }
      // The last seq given, not the messages held: an erased message's seq is never given again.
      const stored: Message = Object.freeze({
        ...message,
        id: crypto.randomUUID(),
        seq: state.conversation.messageCount + 1,
      });
      state.messages.push(stored);
      if (stored.idempotencyKey !== undefined) state.byIdempotencyKey.set(stored.idempotencyKey, stored);
      state.conversation = {
        ...state.conversation,
        updatedAt: new Date().toISOString(),
        messageCount: stored.seq,
        totalTokens: state.conversation.totalTokens + stored.tokens,
      };
      result.push(stored);
    }
    return result;
  }

  async listMessages(scope: Scope, range: MessageRange = {}): Promise<Message[]> {
    const all = this.#conversations.get(conversationKey(scope))?.messages ?? [];
    const selected = all.filter(
      (message) => message.seq > (range.afterSeq ?? 0) && message.seq < (range.beforeSeq ?? Number.POSITIVE_INFINITY),
    );
    if (range.order === 'desc') selected.reverse();
    return range.limit === undefined ? selected : selected.slice(0, range.limit);
  }

  async getConversation(scope: Scope): Promise<Conversation | undefined> {
    return this.#conversations.get(conversationKey(scope))?.conversation;
  }

  async listConversations(filter: ConversationFilter, page: PageOptions = {}): Promise<Page<Conversation>> {
    const limit = resolvePageLimit(page.limit);
    const after = page.cursor === undefined ? undefined : decodeConversationCursor(page.cursor);
    const matching = [...this.#conversations.values()]
      .map((state) => state.conversation)
      .filter((c) => c.tenantId === filter.tenantId && (filter.userId === undefined || c.userId === filter.userId))
      .filter(
        (c) =>
          filter.search === undefined ||
          containsIgnoringAsciiCase(c.userId, filter.search) ||
          containsIgnoringAsciiCase(c.conversationId, filter.search),
      )
      .filter((c) => after === undefined || compareIds(c, after) > 0)
      .sort(compareIds);
    const items = matching.slice(0, limit);
    const last = items[items.length - 1];
    return matching.length > limit && last !== undefined
      ? { items, nextCursor: encodeConversationCursor(last) }
      : { items };
  }

  async updateConversationMetadata(scope: Scope, metadata: Metadata): Promise<Conversation | undefined> {
    const copy = checkConversationMetadata(metadata);
    const state = this.#conversations.get(conversationKey(scope));
    if (state === undefined) return undefined;
    state.conversation = { ...state.conversation, metadata: copy };
    return state.conversation;
  }

  async countMessagesByRole(scope: Scope): Promise<RoleCounts> {
    const messages = this.#conversations.get(conversationKey(scope))?.messages ?? [];
    return toRoleCounts(messages.map((message) => ({ role: message.role, count: 1 })));
  }

  async insertUsage(scope: Scope, record: UsageRecord): Promise<void> {
    const state = this.#conversations.get(conversationKey(scope));
    if (state === undefined) throw new MemoryError('not_found', `conversation ${scope.conversationId} does not exist`);
    state.usage.push({ ...record });
  }

  async getUsageTotals(scope: Scope): Promise<UsageTotals> {
    const usage = this.#conversations.get(conversationKey(scope))?.usage ?? [];
    const sum = (
      kind: UsageRecord['kind'],
      field: 'sentTokens' | 'fullHistoryTokens' | 'inputTokens' | 'outputTokens',
    ) => usage.filter((record) => record.kind === kind).reduce((total, record) => total + (record[field] ?? 0), 0);
    return toUsageTotals({
      requests: usage.filter((record) => record.kind === 'context').length,
      sentTokens: sum('context', 'sentTokens'),
      fullHistoryTokens: sum('context', 'fullHistoryTokens'),
      compactions: usage.filter((record) => record.kind === 'summarize').length,
      summarizerInputTokens: sum('summarize', 'inputTokens'),
      summarizerOutputTokens: sum('summarize', 'outputTokens'),
    });
  }

  async listUsage(scope: Scope, page: PageOptions = {}): Promise<Page<UsageEntry>> {
    const limit = resolvePageLimit(page.limit);
    const after = page.cursor === undefined ? 0 : decodePositionCursor(page.cursor);
    const usage = this.#conversations.get(conversationKey(scope))?.usage ?? [];
    const entries = usage
      .slice(after, after + limit)
      .map((record, index) =>
        Object.freeze({ inputTokens: 0, outputTokens: 0, ...record, position: after + index + 1 }),
      );
    const last = entries[entries.length - 1];
    return usage.length > after + limit && last !== undefined
      ? { items: entries, nextCursor: encodePositionCursor(last.position) }
      : { items: entries };
  }

  async insertSummary(
    scope: Scope,
    summary: NewSummary,
    options: { expectedWatermark: number; expectedErasedMessages?: number },
  ): Promise<Summary> {
    const state = this.#conversations.get(conversationKey(scope));
    if (state === undefined) throw new MemoryError('not_found', `conversation ${scope.conversationId} does not exist`);
    checkSummaryRange(state.conversation, summary, options.expectedWatermark, options.expectedErasedMessages);
    const stored: Summary = Object.freeze({ ...summary, ...scope, id: crypto.randomUUID() });
    const summarizedTokens = state.messages
      .filter((message) => message.seq <= summary.toSeq)
      .reduce((sum, message) => sum + message.tokens, 0);
    state.summaries.push(stored);
    state.conversation = { ...state.conversation, summarizedThroughSeq: summary.toSeq, summarizedTokens };
    state.usage.push({
      kind: 'summarize',
      policy: summary.summarizer,
      sentTokens: 0,
      fullHistoryTokens: 0,
      inputTokens: summary.inputTokens,
      outputTokens: summary.outputTokens,
      createdAt: summary.createdAt,
    });
    return stored;
  }

  async getLatestSummary(scope: Scope): Promise<Summary | undefined> {
    return this.#conversations.get(conversationKey(scope))?.summaries.at(-1);
  }

  async listSummaries(scope: Scope): Promise<Summary[]> {
    return [...(this.#conversations.get(conversationKey(scope))?.summaries ?? [])];
  }

  async getSummary(user: UserScope, summaryId: string): Promise<Summary | undefined> {
    for (const state of this.#conversations.values()) {
      const { tenantId, userId } = state.conversation;
      if (tenantId !== user.tenantId || userId !== user.userId) continue;
      const found = state.summaries.find((summary) => summary.id === summaryId);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  async enqueueJob(scope: Scope, request: JobRequest): Promise<Job> {
    return this.#jobs.enqueue(scope, request, new Date().toISOString());
  }

  async leaseJob(request: LeaseRequest): Promise<Job | undefined> {
    return this.#jobs.lease(request);
  }

  async completeJob(lease: JobLease, now: string, options: JobCompletion = {}): Promise<void> {
    this.#jobs.complete(lease, now, options.warning);
  }

  async failJob(lease: JobLease, failure: JobFailure): Promise<Job> {
    return this.#jobs.fail(lease, failure);
  }

  async listJobs(scope: Scope): Promise<Job[]> {
    return this.#jobs.list(scope);
  }

  async countJobsByKind(filter: { tenantId?: string }): Promise<JobKindCount[]> {
    return this.#jobs.countByKind(filter.tenantId);
  }

  async listFailedJobs(filter: { tenantId?: string; limit: number }): Promise<Job[]> {
    return this.#jobs.listFailed(filter.tenantId, filter.limit);
  }

  async upsertEmbeddings(scope: Scope, model: string, embeddings: readonly MessageEmbedding[]): Promise<void> {
    const state = this.#conversations.get(conversationKey(scope));
    if (state === undefined) throw new MemoryError('not_found', `conversation ${scope.conversationId} does not exist`);
    const vectors = state.embeddings.get(model) ?? new Map<number, Float32Array>();
    for (const { seq, vector } of embeddings) {
      if (!state.messages.some((message) => message.seq === seq))
        throw new MemoryError('not_found', `message ${seq} does not exist`);
      vectors.set(seq, Float32Array.from(vector));
    }
    state.embeddings.set(model, vectors);
  }

  async listUnembeddedMessages(scope: Scope, model: string, limit: number): Promise<Message[]> {
    checkCount('limit', limit);
    const state = this.#conversations.get(conversationKey(scope));
    if (state === undefined) return [];
    const vectors = state.embeddings.get(model);
    return state.messages.filter((message) => vectors?.has(message.seq) !== true).slice(0, limit);
  }

  async listUnembeddedNewest(scope: Scope, model: string, among: number, limit: number): Promise<Message[]> {
    checkCount('among', among);
    checkCount('limit', limit);
    const state = this.#conversations.get(conversationKey(scope));
    if (state === undefined) return [];
    const vectors = state.embeddings.get(model);
    const from = (state.messages.at(-1)?.seq ?? 0) - among;
    return state.messages.filter((message) => message.seq > from && vectors?.has(message.seq) !== true).slice(0, limit);
  }

  async deleteEmbeddings(filter: {
    tenantId: string;
    userId?: string;
    exceptModels?: readonly string[];
  }): Promise<number> {
    let deleted = 0;
    for (const state of this.#conversations.values()) {
      const { tenantId, userId } = state.conversation;
      if (tenantId !== filter.tenantId || (filter.userId !== undefined && userId !== filter.userId)) continue;
      for (const [model, vectors] of state.embeddings) {
        if (filter.exceptModels?.includes(model) === true) continue;
        deleted += vectors.size;
        state.embeddings.delete(model);
      }
    }
    return deleted;
  }

  async countEmbeddings(filter: { tenantId?: string }): Promise<EmbeddingCount[]> {
    const counts: EmbeddingCount[] = [];
    for (const state of this.#conversations.values()) {
      if (filter.tenantId !== undefined && state.conversation.tenantId !== filter.tenantId) continue;
      for (const [model, vectors] of state.embeddings) counts.push({ model, vectors: vectors.size });
    }
    return embeddingCounts(counts);
  }

  async searchKeyword(user: UserScope, terms: readonly string[], options: SearchOptions): Promise<SearchHit[]> {
    return bm25Search(filterSearchable(this.#messagesOf(user), options), terms, options.k);
  }

  async searchVector(
    user: UserScope,
    model: string,
    vector: Float32Array,
    options: SearchOptions,
  ): Promise<SearchHit[]> {
    const vectorOf = (item: SearchableMessage) =>
      this.#conversations
        .get(conversationKey({ ...user, conversationId: item.conversationId }))
        ?.embeddings.get(model)
        ?.get(item.message.seq);
    return vectorSearch(filterSearchable(this.#messagesOf(user), options), vectorOf, vector, options.k);
  }

  async insertFact(user: UserScope, fact: NewFact, options: { supersedes?: string } = {}): Promise<Fact> {
    this.#checkSources('fact', user, fact);
    return this.#facts.insert(user, fact, options.supersedes);
  }

  async retireFact(
    user: UserScope,
    factId: string,
    at: string,
    options: { supersededBy?: string } = {},
  ): Promise<Fact> {
    return this.#facts.retire(user, factId, at, options.supersededBy);
  }

  async setFactExpiry(user: UserScope, factId: string, expiresAt: string | undefined): Promise<Fact> {
    return this.#facts.setExpiry(user, factId, expiresAt);
  }

  async listFacts(user: UserScope, query: FactQuery = {}): Promise<Fact[]> {
    return this.#facts.list(user, query);
  }

  async upsertEntity(user: UserScope, input: EntityInput, now: string): Promise<Entity> {
    return this.#graph.upsertEntity(user, input, now);
  }

  async listEntities(
    user: UserScope,
    query: { query?: string; ids?: readonly string[]; limit?: number } = {},
  ): Promise<Entity[]> {
    return this.#graph.listEntities(user, query);
  }

  async insertRelation(user: UserScope, input: RelationInput, now: string): Promise<Relation> {
    this.#checkSources('relation', user, input);
    return this.#graph.insertRelation(user, input, now);
  }

  async retireRelation(user: UserScope, relationId: string, at: string): Promise<Relation> {
    return this.#graph.retireRelation(user, relationId, at);
  }

  async listRelations(
    user: UserScope,
    query: { entityIds: readonly string[]; includeHistory?: boolean },
  ): Promise<Relation[]> {
    return this.#graph.listRelations(user, query);
  }

  async getCursor(scope: Scope, name: string): Promise<number> {
    return this.#conversations.get(conversationKey(scope))?.cursors.get(name) ?? 0;
  }

  async advanceCursor(scope: Scope, name: string, expected: number, next: number): Promise<void> {
    const state = this.#conversations.get(conversationKey(scope));
    if (state === undefined) throw new MemoryError('not_found', `conversation ${scope.conversationId} does not exist`);
    const current = state.cursors.get(name) ?? 0;
    if (current !== expected)
      throw new MemoryError('conflict', `cursor ${name} is at ${current}, not ${expected}`, {
        details: { name, current, expected },
      });
    state.cursors.set(name, next);
  }

  async getMemoryFile(user: UserScope, path: string): Promise<MemoryFile | undefined> {
    return this.#files.get(user, path);
  }

  async listMemoryFiles(user: UserScope, directory: string): Promise<MemoryFileInfo[]> {
    return this.#files.list(user, directory);
  }

  async putMemoryFile(user: UserScope, write: MemoryFileWrite): Promise<MemoryFile> {
    return this.#files.put(user, write);
  }

  async deleteMemoryFiles(user: UserScope, path: string): Promise<number> {
    return this.#files.delete(user, path);
  }

  async renameMemoryFiles(user: UserScope, from: string, to: string, now: string): Promise<number> {
    return this.#files.rename(user, from, to, now);
  }

  async deleteConversation(scope: Scope): Promise<EraseResult> {
    const key = conversationKey(scope);
    const state = this.#conversations.get(key);
    this.#conversations.delete(key);
    this.#jobs.delete((job) => conversationKey(job) === key);
    return { conversations: state === undefined ? 0 : 1, messages: state?.messages.length ?? 0 };
  }

  async deleteUser(user: UserScope): Promise<EraseResult> {
    this.#files.deleteUser(user);
    this.#facts.deleteUser(user);
    this.#graph.deleteUser(user);
    let conversations = 0;
    let messages = 0;
    for (const [key, state] of this.#conversations) {
      if (state.conversation.tenantId !== user.tenantId || state.conversation.userId !== user.userId) continue;
      this.#conversations.delete(key);
      this.#jobs.delete((job) => conversationKey(job) === key);
      conversations += 1;
      messages += state.messages.length;
    }
    return { conversations, messages };
  }

  async eraseMessages(
    user: UserScope,
    selection: MessageSelection,
    options: EraseMessagesOptions,
  ): Promise<ErasureReceipt> {
    const checked = checkMessageSelection(selection);
    const before = checked.before === undefined ? Number.POSITIVE_INFINITY : Date.parse(checked.before);
    const erased = new Map<string, Set<number>>();
    const erasedTexts: string[] = [];
    let messages = 0;
    let vectors = 0;
    let summaries = 0;
    for (const state of this.#conversations.values()) {
      const conversation = state.conversation;
      if (conversation.tenantId !== user.tenantId || conversation.userId !== user.userId) continue;
      if (checked.conversationId !== undefined && conversation.conversationId !== checked.conversationId) continue;
      const gone = state.messages.filter(
        (message) =>
          message.seq >= (checked.fromSeq ?? 1) &&
          message.seq <= (checked.toSeq ?? Number.MAX_SAFE_INTEGER) &&
          Date.parse(message.createdAt) < before,
      );
      if (gone.length === 0) continue;
      const seqs = new Set(gone.map((message) => message.seq));
      erased.set(conversation.conversationId, seqs);
      erasedTexts.push(...gone.map((message) => message.content));
      messages += gone.length;
      for (let index = state.messages.length - 1; index >= 0; index -= 1)
        if (seqs.has(state.messages[index]!.seq)) state.messages.splice(index, 1);
      for (const [key, message] of state.byIdempotencyKey)
        if (seqs.has(message.seq)) state.byIdempotencyKey.delete(key);
      for (const byModel of state.embeddings.values()) for (const seq of seqs) if (byModel.delete(seq)) vectors += 1;
      // Every summary from the first that covered an erased seq on: later ones folded it.
      const first = Math.min(...seqs);
      const kept = state.summaries.filter((summary) => summary.toSeq < first);
      summaries += state.summaries.length - kept.length;
      state.summaries.splice(0, state.summaries.length, ...kept);
      const watermark = kept.at(-1)?.toSeq ?? 0;
      state.conversation = {
        ...conversation,
        totalTokens: conversation.totalTokens - gone.reduce((sum, message) => sum + message.tokens, 0),
        summarizedThroughSeq: watermark,
        summarizedTokens: state.messages
          .filter((message) => message.seq <= watermark)
          .reduce((sum, message) => sum + message.tokens, 0),
        erasedMessages: (conversation.erasedMessages ?? 0) + gone.length,
      };
    }
    const entities = this.#graph
      .all()
      .entities.filter((entity) => entity.tenantId === user.tenantId && entity.userId === user.userId);
    const planned = planKnowledgeErasure(
      this.#facts.list(user, { includeHistory: true }),
      this.#graph.relationsOf(user),
      erased,
      {
        entities,
        erasedTexts,
      },
    );
    const remaining = [...this.#conversations.values()]
      .filter((state) => state.conversation.tenantId === user.tenantId && state.conversation.userId === user.userId)
      .flatMap((state) => state.messages.map((message) => message.content.toLowerCase()));
    const names = new Set(planned.namedEntities.flatMap((named) => named.names));
    const edits = settleEntityNames(
      planned.namedEntities,
      new Set([...names].filter((name) => !remaining.some((content) => content.includes(name)))),
    );
    const plan = { ...planned, deleteEntityIds: [...planned.deleteEntityIds, ...edits.deleteEntityIds] };
    this.#facts.applyErasure(user, plan);
    this.#graph.applyErasure(user, plan, edits.updates);
    const counts: ErasureCounts = {
      messages,
      conversations: erased.size,
      vectors,
      summaries,
      facts: plan.deleteFactIds.length,
      factsKept: plan.updateFacts.length,
      relations: plan.deleteRelationIds.length,
      entities: plan.deleteEntityIds.length,
      memoryFiles: options.memoryFiles ?? 0,
    };
    const entry: ErasureAuditEntry = Object.freeze({
      id: crypto.randomUUID(),
      ...user,
      selection: checked,
      erasedAt: options.now,
      ...counts,
    });
    this.#erasures.push(entry);
    return Object.freeze({ ...counts, auditId: entry.id });
  }

  async listErasures(filter: { tenantId: string; userId?: string }): Promise<ErasureAuditEntry[]> {
    return this.#erasures.filter(
      (entry) => entry.tenantId === filter.tenantId && (filter.userId === undefined || entry.userId === filter.userId),
    );
  }

  // A fact or relation from messages none of which is stored (erased while a job read them) is refused.
  #checkSources(
    kind: 'fact' | 'relation',
    user: UserScope,
    source: { sourceConversationId?: string; sourceSeqs: readonly number[] },
  ): void {
    if (source.sourceConversationId === undefined || source.sourceSeqs.length === 0) return;
    const state = this.#conversations.get(conversationKey({ ...user, conversationId: source.sourceConversationId }));
    if (state?.conversation.erasedMessages === undefined) return;
    if (!state.messages.some((message) => source.sourceSeqs.includes(message.seq)))
      throw erasedSourceConflict(kind, source.sourceConversationId, source.sourceSeqs);
  }

  async *exportRecords(options: ExportRecordsOptions = {}): AsyncIterable<StoreRecord[]> {
    const pageSize = resolveExportPageSize(options.pageSize);
    // The snapshot: every record is taken before the first page is handed out.
    const records = this.#records();
    for (const kind of new Set(records.map((record) => record.kind))) {
      const ofKind = records.filter((record) => record.kind === kind);
      for (let offset = 0; offset < ofKind.length; offset += pageSize) yield ofKind.slice(offset, offset + pageSize);
    }
  }

  async importRecords(
    records: AsyncIterable<readonly StoreRecord[]> | Iterable<readonly StoreRecord[]>,
    options: ImportRecordsOptions = {},
  ): Promise<StoreRecordCounts> {
    const present = emptyRecordCounts();
    countRecords(present, this.#records());
    if (totalRecordCount(present) > 0 && options.replace !== true) throw storeNotEmpty(totalRecordCount(present));
    // Built aside and swapped in at the end: a failed import leaves the store as it was.
    const conversations = new Map<string, ConversationState>();
    const facts: Fact[] = [];
    const entities: Entity[] = [];
    const relations: Relation[] = [];
    const files: MemoryFile[] = [];
    const stateOf = (scope: Scope): ConversationState => {
      const state = conversations.get(conversationKey(scope));
      if (state === undefined)
        throw new MemoryError(
          'invalid_input',
          `a record of conversation ${scope.conversationId} comes before the conversation`,
          {
            details: { field: 'conversationId' },
          },
        );
      return state;
    };
    for await (const page of records) {
      checkRecords(page);
      for (const record of page) {
        if (record.kind === 'conversation') {
          conversations.set(conversationKey(record.conversation), newConversationState({ ...record.conversation }));
        } else if (record.kind === 'message') {
          const state = stateOf(record.scope);
          const message = Object.freeze({ ...record.message });
          state.messages.push(message);
          if (message.idempotencyKey !== undefined) state.byIdempotencyKey.set(message.idempotencyKey, message);
        } else if (record.kind === 'usage') stateOf(record.scope).usage.push({ ...record.usage });
        else if (record.kind === 'summary')
          stateOf(record.summary).summaries.push(Object.freeze({ ...record.summary }));
        else if (record.kind === 'cursor') stateOf(record.scope).cursors.set(record.name, record.position);
        else if (record.kind === 'fact') facts.push({ ...record.fact });
        else if (record.kind === 'entity') entities.push({ ...record.entity });
        else if (record.kind === 'relation') relations.push({ ...record.relation });
        else files.push({ ...record.file });
      }
    }
    this.#conversations.clear();
    for (const [key, state] of conversations) this.#conversations.set(key, state);
    this.#jobs.delete(() => true);
    this.#facts.replaceAll(facts);
    this.#graph.replaceAll(entities, relations);
    this.#files.replaceAll(files);
    const counts = emptyRecordCounts();
    countRecords(counts, this.#records());
    return counts;
  }

  #messagesOf(user: UserScope): SearchableMessage[] {
    return [...this.#conversations.values()]
      .filter((state) => state.conversation.tenantId === user.tenantId && state.conversation.userId === user.userId)
      .flatMap((state) =>
        state.messages.map((message) => ({ conversationId: state.conversation.conversationId, message })),
      );
  }

  // Every record, in export order; an entity's names are those no earlier entity of its user claimed.
  #records(): StoreRecord[] {
    const states = [...this.#conversations.values()];
    const scopeOf = (state: ConversationState): Scope => {
      const { tenantId, userId, conversationId } = state.conversation;
      return { tenantId, userId, conversationId };
    };
    const claimed = new Set<string>();
    const { entities, relations } = this.#graph.all();
    return [
      ...states.map((state): StoreRecord => ({ kind: 'conversation', conversation: state.conversation })),
      ...states.flatMap((state) =>
        state.messages.map((message): StoreRecord => ({ kind: 'message', scope: scopeOf(state), message })),
      ),
      ...states.flatMap((state) =>
        state.usage.map((usage): StoreRecord => ({ kind: 'usage', scope: scopeOf(state), usage })),
      ),
      ...states.flatMap((state) => state.summaries.map((summary): StoreRecord => ({ kind: 'summary', summary }))),
      ...states.flatMap((state) =>
        [...state.cursors].map(([name, position]): StoreRecord => ({
          kind: 'cursor',
          scope: scopeOf(state),
          name,
          position,
        })),
      ),
      ...this.#facts.all().map((fact): StoreRecord => ({ kind: 'fact', fact })),
      ...entities.map((entity): StoreRecord => {
        const names = [...new Set(namesOf(entity))].filter(
          (name) => !claimed.has(JSON.stringify([entity.tenantId, entity.userId, name])),
        );
        for (const name of names) claimed.add(JSON.stringify([entity.tenantId, entity.userId, name]));
        return { kind: 'entity', entity, names };
      }),
      ...relations.map((relation): StoreRecord => ({ kind: 'relation', relation })),
      ...this.#files.all().map((file): StoreRecord => ({ kind: 'memoryFile', file })),
    ];
  }
}

function newConversationState(conversation: Conversation): ConversationState {
  return {
    conversation,
    messages: [],
    byIdempotencyKey: new Map(),
    usage: [],
    summaries: [],
    embeddings: new Map(),
    cursors: new Map(),
  };
}

function conversationKey(scope: Scope): string {
  return JSON.stringify([scope.tenantId, scope.userId, scope.conversationId]);
}

function compareIds(
  a: { userId: string; conversationId: string },
  b: { userId: string; conversationId: string },
): number {
  return compareText(a.userId, b.userId) || compareText(a.conversationId, b.conversationId);
}

// SQLite's lower() folds ASCII letters only; folding only those here keeps the stores' answers equal.
function containsIgnoringAsciiCase(text: string, search: string): boolean {
  return asciiLower(text).includes(asciiLower(search));
}

function asciiLower(text: string): string {
  return text.replace(/[A-Z]/g, (letter) => letter.toLowerCase());
}

/**
 * A {@link Store} held in process memory: for tests, demos and `:memory:` use. It passes the same
 * conformance suite as the durable stores, behind the same guard (a closed store and an aborted signal
 * are `unavailable`); everything is lost when the process ends.
 */
export class InMemoryStore extends ComposedStore {
  constructor() {
    const parts = new InMemoryParts();
    super({
      messages: parts,
      usage: parts,
      summaries: parts,
      jobs: parts,
      search: parts,
      knowledge: parts,
      files: parts,
      transfer: parts,
      erasure: parts,
      // The parts throw MemoryErrors for what a caller did wrong; anything else is a defect, shown as storage_failed.
      toError: (error, action) =>
        isMemoryError(error)
          ? error
          : new MemoryError('storage_failed', `${action} failed: ${String(error)}`, { cause: error }),
      closeConnection: () => undefined,
    });
  }
}
