import { MemoryError } from '@mnemo/core';
import type { Scope, Summary, UserScope } from '@mnemo/core';
import type { NewSummary } from '@mnemo/core/internals';
import {
  checkCount,
  checkSummaryRange,
  summaryColumns,
  summaryFromRow,
  type ConversationRow,
  type SummaryRow,
} from '@mnemo/core/store-kit';
import type { SqliteDatabase } from './sqlite-driver.js';
import { conversationReadColumns, toConversation } from './sqlite-message-store.js';
import { createStatementCache, type SqliteStatementCache } from './sqlite-statement-cache.js';
import { scopeKey, toEpochMs, toIsoTime } from './sqlite-values.js';

const inConversation = 'tenant_id = ? AND user_id = ? AND conversation_id = ?';

const sql = {
  selectConversation: `SELECT ${conversationReadColumns} FROM conversations WHERE ${inConversation}`,
  insertSummary: `INSERT INTO summaries (${summaryColumns}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  coveredTokens: `SELECT coalesce(sum(tokens), 0) AS tokens FROM messages WHERE ${inConversation} AND seq <= ?`,
  moveWatermark: `UPDATE conversations SET summarized_through_seq = ?, summarized_tokens = ? WHERE ${inConversation}`,
  insertUsage: `INSERT INTO usage (tenant_id, user_id, conversation_id, kind, policy, sent_tokens, full_history_tokens, input_tokens, output_tokens, created_at)
    VALUES (?, ?, ?, 'summarize', ?, 0, 0, ?, ?, ?)`,
  selectLatest: `SELECT ${summaryColumns} FROM summaries WHERE ${inConversation} ORDER BY rowid DESC LIMIT 1`,
  selectAll: `SELECT ${summaryColumns} FROM summaries WHERE ${inConversation} ORDER BY rowid`,
  selectById: `SELECT ${summaryColumns} FROM summaries WHERE tenant_id = ? AND id = ? AND user_id = ?`,
} as const;

/** The SQL of summaries: versions kept forever, each written together with the watermark move. */
export class SqliteSummaryStore {
  readonly #database: SqliteDatabase;
  readonly #statement: SqliteStatementCache;

  constructor(database: SqliteDatabase) {
    this.#database = database;
    this.#statement = createStatementCache(database);
  }

  /** Writes the summary, the watermark and the ledger entry in one `BEGIN IMMEDIATE` transaction. */
  insertSummary(
    scope: Scope,
    summary: NewSummary,
    options: { expectedWatermark: number; expectedErasedMessages?: number },
  ): Summary {
    const { expectedWatermark, expectedErasedMessages } = options;
    const createdAtMs = toEpochMs('createdAt', summary.createdAt);
    for (const field of ['level', 'fromSeq', 'toSeq', 'tokens', 'inputTokens', 'outputTokens'] as const)
      checkCount(field, summary[field]);
    return this.#database
      .transaction(() => {
        const key = scopeKey(scope);
        const row = this.#statement(sql.selectConversation).get(...key) as ConversationRow | undefined;
        if (row === undefined)
          throw new MemoryError('not_found', `conversation ${scope.conversationId} does not exist`);
        checkSummaryRange(toConversation(row), summary, expectedWatermark, expectedErasedMessages);
        const id = crypto.randomUUID();
        this.#statement(sql.insertSummary).run(
          id,
          ...key,
          summary.level,
          summary.fromSeq,
          summary.toSeq,
          summary.content,
          summary.tokens,
          JSON.stringify(summary.foldedSummaryIds),
          summary.summarizer,
          summary.inputTokens,
          summary.outputTokens,
          summary.fallbackReason ?? null,
          createdAtMs,
        );
        const covered = this.#statement(sql.coveredTokens).get(...key, summary.toSeq) as { tokens: number };
        this.#statement(sql.moveWatermark).run(summary.toSeq, covered.tokens, ...key);
        this.#statement(sql.insertUsage).run(
          ...key,
          summary.summarizer,
          summary.inputTokens,
          summary.outputTokens,
          createdAtMs,
        );
        return Object.freeze({ ...summary, ...scope, id });
      })
      .immediate();
  }

  getLatestSummary(scope: Scope): Summary | undefined {
    const row = this.#statement(sql.selectLatest).get(...scopeKey(scope)) as SummaryRow | undefined;
    return row === undefined ? undefined : toSummary(row);
  }

  listSummaries(scope: Scope): Summary[] {
    return (this.#statement(sql.selectAll).all(...scopeKey(scope)) as SummaryRow[]).map(toSummary);
  }

  getSummary(user: UserScope, summaryId: string): Summary | undefined {
    const row = this.#statement(sql.selectById).get(user.tenantId, summaryId, user.userId) as SummaryRow | undefined;
    return row === undefined ? undefined : toSummary(row);
  }
}

function toSummary(row: SummaryRow): Summary {
  return summaryFromRow(row, toIsoTime);
}
