import { MemoryError } from '@mnemo/core';
import type { Scope, Summary, UserScope } from '@mnemo/core';
import type { NewSummary } from '@mnemo/core/internals';
import {
  checkSummaryRange,
  summaryColumns,
  summaryFromRow,
  type ConversationRow,
  type SummaryRow,
} from '@mnemo/core/store-kit';
import type { PostgresPool } from './postgres-driver.js';
import { conversationColumns, inConversation, toConversation } from './postgres-message-store.js';
import type { PostgresTables } from './postgres-tables.js';
import { runInTransaction } from './postgres-transaction.js';
import { checkCount, checkTime, scopeKey, toIsoTime } from './postgres-values.js';

function statements(t: PostgresTables) {
  return {
    lockConversation: `SELECT ${conversationColumns} FROM ${t.conversations} WHERE ${inConversation} FOR UPDATE`,
    // The summary, its ledger entry and the watermark move in one statement, inside the transaction that
    // holds the conversation's row lock and checked the watermark.
    write: `WITH summary AS (
        INSERT INTO ${t.summaries} (${summaryColumns}) VALUES ($4, $1, $2, $3, $5, $6, $7, $8, $9, $10::json, $11, $12, $13, $14, $15)
      ), ledger AS (
        INSERT INTO ${t.usage} (tenant_id, user_id, conversation_id, kind, policy, sent_tokens, full_history_tokens, input_tokens, output_tokens, created_at)
        VALUES ($1, $2, $3, 'summarize', $11, 0, 0, $12, $13, $15)
      )
      UPDATE ${t.conversations} SET summarized_through_seq = $7,
        summarized_tokens = (SELECT coalesce(sum(tokens), 0) FROM ${t.messages} WHERE ${inConversation} AND seq <= $7)
      WHERE ${inConversation}`,
    selectLatest: `SELECT ${summaryColumns} FROM ${t.summaries} WHERE ${inConversation} ORDER BY position DESC LIMIT 1`,
    selectAll: `SELECT ${summaryColumns} FROM ${t.summaries} WHERE ${inConversation} ORDER BY position`,
    selectById: `SELECT ${summaryColumns} FROM ${t.summaries} WHERE tenant_id = $1 AND id = $2 AND user_id = $3`,
  };
}

/** The SQL of summaries: versions kept forever, each written together with the watermark move. */
export class PostgresSummaryStore {
  readonly #pool: PostgresPool;
  readonly #sql: ReturnType<typeof statements>;

  constructor(pool: PostgresPool, tables: PostgresTables) {
    this.#pool = pool;
    this.#sql = statements(tables);
  }

  /**
   * Writes the summary, the watermark and the ledger entry in one transaction that locks the conversation's
   * row and checks the watermark under the lock: of two workers racing, the second waits, then sees the
   * moved watermark and fails with `conflict`, writing nothing.
   */
  async insertSummary(
    scope: Scope,
    summary: NewSummary,
    options: { expectedWatermark: number; expectedErasedMessages?: number },
  ): Promise<Summary> {
    const { expectedWatermark, expectedErasedMessages } = options;
    const createdAt = checkTime('createdAt', summary.createdAt);
    for (const field of ['level', 'fromSeq', 'toSeq', 'tokens', 'inputTokens', 'outputTokens'] as const)
      checkCount(field, summary[field]);
    return runInTransaction(this.#pool, async (client) => {
      const key = scopeKey(scope);
      const row = (await client.query<ConversationRow>(this.#sql.lockConversation, key)).rows[0];
      if (row === undefined) throw new MemoryError('not_found', `conversation ${scope.conversationId} does not exist`);
      checkSummaryRange(toConversation(row), summary, expectedWatermark, expectedErasedMessages);
      const id = crypto.randomUUID();
      await client.query(this.#sql.write, [
        ...key,
        id,
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
        createdAt,
      ]);
      return Object.freeze({ ...summary, ...scope, id });
    });
  }

  async getLatestSummary(scope: Scope): Promise<Summary | undefined> {
    const row = (await this.#pool.query<SummaryRow>(this.#sql.selectLatest, scopeKey(scope))).rows[0];
    return row === undefined ? undefined : toSummary(row);
  }

  async listSummaries(scope: Scope): Promise<Summary[]> {
    return (await this.#pool.query<SummaryRow>(this.#sql.selectAll, scopeKey(scope))).rows.map(toSummary);
  }

  async getSummary(user: UserScope, summaryId: string): Promise<Summary | undefined> {
    const row = (await this.#pool.query<SummaryRow>(this.#sql.selectById, [user.tenantId, summaryId, user.userId]))
      .rows[0];
    return row === undefined ? undefined : toSummary(row);
  }
}

function toSummary(row: SummaryRow): Summary {
  return summaryFromRow(row, toIsoTime);
}
