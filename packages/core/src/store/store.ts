import type { SummaryPort } from '../compaction/summary-port.js';
import type { FilePort } from '../files/file-port.js';
import type { JobPort } from '../jobs/job-port.js';
import type { KnowledgePort } from '../knowledge/knowledge-port.js';
import type { MessagePort } from '../messages/message-port.js';
import type { SearchPort } from '../recall/search-port.js';
import type { UsagePort } from '../usage/usage-port.js';
import type { ErasurePort } from './erasure-port.js';
import type { TransferPort } from './transfer-port.js';

import type { Job, JobKind } from '../jobs/job.js';
import type { Metadata } from '../messages/message.js';

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
 * The storage port every adapter implements: one port per concept (each declared in its concept's
 * folder, e.g. `MessagePort` in messages/), joined. Every method is scoped by tenant; an adapter must never
 * read or write a row of another tenant (the job queue is the one cross-tenant reader: a worker leases
 * jobs of every tenant and then works inside the job's scope). Failures are `MemoryError`s:
 * `storage_failed` wrapping the driver error, `unavailable` (closed, aborted, or busy past a timeout;
 * retryable), `conflict`, `not_found`, `invalid_input`. No method returns empty data in place of an error.
 */
export type Store = MessagePort &
  UsagePort &
  SummaryPort &
  JobPort &
  SearchPort &
  KnowledgePort &
  FilePort &
  TransferPort &
  ErasurePort &
  StoreLifecycle;

/** What the whole store does beyond its concepts: tell whether it can serve, and close. */
export interface StoreLifecycle {
  /**
   * Optional: whether the store can serve reads and writes now (readiness, as opposed to the process
   * being alive). Never throws for a failing store; the failure is in the answer. Without it a caller
   * tries one read.
   */
  checkReadiness?(options?: CallOptions): Promise<StoreReadiness>;
  /** Releases connections and files. Calls after `close` fail with `unavailable`. */
  close(): Promise<void>;
}
