import type { ErasureAuditEntry, ErasureCounts, ErasureReceipt, MessageSelection, UserScope } from '@mnemo/core';
import type { EraseMessagesOptions } from '@mnemo/core/internals';
import {
  checkMessageSelection,
  entityFromRow,
  type EntityRow,
  factFromRow,
  type FactRow,
  groupBy,
  planKnowledgeErasure,
  relationFromRow,
  settleEntityNames,
  type RelationRow,
} from '@mnemo/core/store-kit';
import type { PostgresClient, PostgresPool } from './postgres-driver.js';
import type { PostgresTables } from './postgres-tables.js';
import { runInTransaction } from './postgres-transaction.js';
import { checkTime, toInteger, toIsoTime } from './postgres-values.js';

const ofUser = 'tenant_id = $1 AND user_id = $2';
// The victims as two arrays, $3 conversation ids and $4 seqs, joined on the owner columns.
const victims = `(conversation_id, seq) IN (SELECT * FROM unnest($3::text[], $4::bigint[]))`;

interface VictimRow {
  readonly content: string;
  readonly conversation_id: string;
  readonly seq: string | number;
  readonly tokens: string | number;
  readonly lexemes: string | number;
}

interface AuditRow {
  readonly id: string;
  readonly tenant_id: string;
  readonly user_id: string;
  readonly selection: MessageSelection;
  readonly counts: ErasureCounts;
  readonly erased_at: Date;
}

/**
 * The SQL of `Store.eraseMessages` on PostgreSQL, in one transaction that first locks the user's
 * conversation rows (in id order, as appends and erases of a user do): the messages and their vectors in
 * every table (the `real[]` one and each model's pgvector table), the summaries that covered them, the
 * facts, relations and entities only they stated, the counters (tokens, BM25's `search_length`, the
 * erased count that tells every process's keyword copy to read the user afresh) and the audit entry.
 * The rows are gone for every reader once it commits; their bytes stay in the table's pages until VACUUM
 * reuses them, and in WAL archives and backups until those expire (docs/decisions on erasure).
 */
export class PostgresMessageErasure {
  readonly #pool: PostgresPool;
  readonly #tables: PostgresTables;

  constructor(pool: PostgresPool, tables: PostgresTables) {
    this.#pool = pool;
    this.#tables = tables;
  }

  async erase(user: UserScope, unchecked: MessageSelection, options: EraseMessagesOptions): Promise<ErasureReceipt> {
    const selection = checkMessageSelection(unchecked);
    const erasedAt = checkTime('now', options.now);
    return runInTransaction(this.#pool, async (client) => {
      const t = this.#tables;
      const key = [user.tenantId, user.userId];
      await client.query(
        `SELECT conversation_id FROM ${t.conversations} WHERE ${ofUser} AND ($3::text IS NULL OR conversation_id = $3) ORDER BY conversation_id FOR UPDATE`,
        [...key, selection.conversationId ?? null],
      );
      const rows = (
        await client.query<VictimRow>(
          `SELECT conversation_id, seq, tokens, content, length(search_vector) AS lexemes FROM ${t.messages}
           WHERE ${ofUser} AND ($3::text IS NULL OR conversation_id = $3) AND seq >= $4 AND seq <= $5 AND ($6::timestamptz IS NULL OR created_at < $6)`,
          [
            ...key,
            selection.conversationId ?? null,
            selection.fromSeq ?? 1,
            selection.toSeq ?? Number.MAX_SAFE_INTEGER,
            selection.before ?? null,
          ],
        )
      ).rows;
      const counts = rows.length === 0 ? emptyCounts(options) : await this.#eraseRows(client, user, rows, options);
      const auditId = crypto.randomUUID();
      await client.query(
        `INSERT INTO ${t.erasures} (id, tenant_id, user_id, selection, counts, erased_at) VALUES ($3, $1, $2, $4::jsonb, $5::jsonb, $6)`,
        [...key, auditId, JSON.stringify(selection), JSON.stringify(counts), erasedAt],
      );
      return Object.freeze({ ...counts, auditId });
    });
  }

  async list(filter: { tenantId: string; userId?: string }): Promise<ErasureAuditEntry[]> {
    const rows = (
      await this.#pool.query<AuditRow>(
        `SELECT * FROM ${this.#tables.erasures} WHERE tenant_id = $1 AND ($2::text IS NULL OR user_id = $2) ORDER BY position`,
        [filter.tenantId, filter.userId ?? null],
      )
    ).rows;
    return rows.map((row) =>
      Object.freeze({
        id: row.id,
        tenantId: row.tenant_id,
        userId: row.user_id,
        selection: row.selection,
        erasedAt: toIsoTime(row.erased_at),
        ...row.counts,
      }),
    );
  }

  async #eraseRows(
    client: PostgresClient,
    user: UserScope,
    rows: readonly VictimRow[],
    options: EraseMessagesOptions,
  ): Promise<ErasureCounts> {
    const t = this.#tables;
    const target = [
      user.tenantId,
      user.userId,
      rows.map((row) => row.conversation_id),
      rows.map((row) => toInteger(row.seq)),
    ];
    let vectors = 0;
    const models = (await client.query<{ id: number }>(`SELECT id FROM ${t.vectorTables} ORDER BY id`)).rows;
    for (const { id } of models)
      vectors +=
        (await client.query(`DELETE FROM ${t.vectorTable(id)} WHERE ${ofUser} AND ${victims}`, target)).rowCount ?? 0;
    vectors +=
      (await client.query(`DELETE FROM ${t.messageVectors} WHERE ${ofUser} AND ${victims}`, target)).rowCount ?? 0;
    await client.query(`DELETE FROM ${t.messages} WHERE ${ofUser} AND ${victims}`, target);
    const byConversation = groupBy(rows, (row) => row.conversation_id);
    let summaries = 0;
    for (const [conversationId, erased] of byConversation) {
      const scope = [user.tenantId, user.userId, conversationId];
      const first = erased.reduce((least, row) => Math.min(least, toInteger(row.seq)), Number.POSITIVE_INFINITY);
      // Summaries fold their predecessors, so every one from the first that covered an erased seq goes.
      summaries +=
        (
          await client.query(`DELETE FROM ${t.summaries} WHERE ${ofUser} AND conversation_id = $3 AND to_seq >= $4`, [
            ...scope,
            first,
          ])
        ).rowCount ?? 0;
      await client.query(
        `WITH mark AS (SELECT coalesce(max(to_seq), 0) AS seq FROM ${t.summaries} WHERE ${ofUser} AND conversation_id = $3)
         UPDATE ${t.conversations} c SET total_tokens = c.total_tokens - $4, search_length = c.search_length - $5, erased_messages = c.erased_messages + $6,
           summarized_through_seq = mark.seq,
           summarized_tokens = (SELECT coalesce(sum(m.tokens), 0) FROM ${t.messages} m WHERE m.tenant_id = $1 AND m.user_id = $2 AND m.conversation_id = $3 AND m.seq <= mark.seq)
         FROM mark WHERE c.tenant_id = $1 AND c.user_id = $2 AND c.conversation_id = $3`,
        [...scope, sum(erased, 'tokens'), sum(erased, 'lexemes'), erased.length],
      );
    }
    const knowledge = await this.#eraseKnowledge(client, user, byConversation);
    return {
      messages: rows.length,
      conversations: byConversation.size,
      vectors,
      summaries,
      ...knowledge,
      memoryFiles: options.memoryFiles ?? 0,
    };
  }

  async #eraseKnowledge(
    client: PostgresClient,
    user: UserScope,
    byConversation: ReadonlyMap<string, readonly VictimRow[]>,
  ): Promise<Pick<ErasureCounts, 'facts' | 'factsKept' | 'relations' | 'entities'>> {
    const t = this.#tables;
    const key = [user.tenantId, user.userId];
    // The graph's advisory lock, as graph writes take it: an extractor cannot add a relation to an entity removed here.
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
      [t.schema, 'graph', user.tenantId, user.userId].join('\u001f'),
    ]);
    const facts = (
      await client.query<FactRow>(`SELECT * FROM ${t.facts} WHERE ${ofUser} ORDER BY position FOR UPDATE`, key)
    ).rows.map((row) => factFromRow(row, toIsoTime));
    const relations = (
      await client.query<RelationRow>(`SELECT * FROM ${t.relations} WHERE ${ofUser} ORDER BY position FOR UPDATE`, key)
    ).rows.map((row) => relationFromRow(row, toIsoTime));
    const erased = new Map(
      [...byConversation].map(([conversationId, rows]) => [
        conversationId,
        new Set(rows.map((row) => toInteger(row.seq))),
      ]),
    );
    const entities = (
      await client.query<EntityRow>(`SELECT * FROM ${t.entities} WHERE ${ofUser} ORDER BY position`, key)
    ).rows.map((row) => entityFromRow(row, toIsoTime));
    const erasedTexts = [...byConversation.values()].flatMap((rows) => rows.map((row) => row.content));
    const planned = planKnowledgeErasure(facts, relations, erased, { entities, erasedTexts });
    // An entity only erased messages named goes; one another stored message of the user names stays.
    const unmentioned = new Set<string>();
    for (const name of new Set(planned.namedEntities.flatMap((named) => named.names))) {
      const named = await client.query(
        `SELECT 1 FROM ${t.messages} WHERE ${ofUser} AND strpos(lower(content), $3) > 0 LIMIT 1`,
        [...key, name],
      );
      if (named.rows.length === 0) unmentioned.add(name);
    }
    const edits = settleEntityNames(planned.namedEntities, unmentioned);
    const plan = { ...planned, deleteEntityIds: [...planned.deleteEntityIds, ...edits.deleteEntityIds] };
    for (const update of edits.updates) {
      await client.query(`UPDATE ${t.entities} SET aliases = $4::json, description = $5 WHERE ${ofUser} AND id = $3`, [
        ...key,
        update.id,
        JSON.stringify(update.aliases),
        update.description ?? null,
      ]);
      await client.query(`DELETE FROM ${t.entityNames} WHERE ${ofUser} AND entity_id = $3 AND name = ANY($4::text[])`, [
        ...key,
        update.id,
        update.removedNames,
      ]);
    }
    await client.query(`DELETE FROM ${t.facts} WHERE ${ofUser} AND id = ANY($3::text[])`, [...key, plan.deleteFactIds]);
    for (const update of plan.updateFacts) {
      await client.query(`UPDATE ${t.facts} SET source_seqs = $4::json, text = $5 WHERE ${ofUser} AND id = $3`, [
        ...key,
        update.id,
        JSON.stringify(update.sourceSeqs),
        update.text,
      ]);
    }
    for (const relink of plan.relinkFacts) {
      await client.query(`UPDATE ${t.facts} SET superseded_by = $4, valid_to = $5 WHERE ${ofUser} AND id = $3`, [
        ...key,
        relink.id,
        relink.supersededBy ?? null,
        relink.validTo ?? null,
      ]);
    }
    await client.query(`DELETE FROM ${t.relations} WHERE ${ofUser} AND id = ANY($3::text[])`, [
      ...key,
      plan.deleteRelationIds,
    ]);
    for (const update of plan.updateRelations) {
      await client.query(`UPDATE ${t.relations} SET source_seqs = $4::json WHERE ${ofUser} AND id = $3`, [
        ...key,
        update.id,
        JSON.stringify(update.sourceSeqs),
      ]);
    }
    await client.query(`DELETE FROM ${t.entityNames} WHERE ${ofUser} AND entity_id = ANY($3::text[])`, [
      ...key,
      plan.deleteEntityIds,
    ]);
    await client.query(`DELETE FROM ${t.entities} WHERE ${ofUser} AND id = ANY($3::text[])`, [
      ...key,
      plan.deleteEntityIds,
    ]);
    return {
      facts: plan.deleteFactIds.length,
      factsKept: plan.updateFacts.length,
      relations: plan.deleteRelationIds.length,
      entities: plan.deleteEntityIds.length,
    };
  }
}

function sum(rows: readonly VictimRow[], field: 'tokens' | 'lexemes'): number {
  return rows.reduce((total, row) => total + toInteger(row[field] ?? 0), 0);
}

function emptyCounts(options: EraseMessagesOptions): ErasureCounts {
  return {
    messages: 0,
    conversations: 0,
    vectors: 0,
    summaries: 0,
    facts: 0,
    factsKept: 0,
    relations: 0,
    entities: 0,
    memoryFiles: options.memoryFiles ?? 0,
  };
}
