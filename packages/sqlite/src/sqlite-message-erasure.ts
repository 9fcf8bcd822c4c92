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
import type { SqliteDatabase } from './sqlite-driver.js';
import { createStatementCache, type SqliteStatementCache } from './sqlite-statement-cache.js';
import { toEpochMs, toIsoTime } from './sqlite-values.js';

const ofUser = 'tenant_id = ? AND user_id = ?';

interface ErasedRow {
  readonly rowid: number;
  readonly content: string;
  readonly conversation_id: string;
  readonly seq: number;
  readonly tokens: number;
}

interface AuditRow {
  readonly id: string;
  readonly tenant_id: string;
  readonly user_id: string;
  readonly selection: string;
  readonly counts: string;
  readonly erased_at: number;
}

/**
 * The SQL of `Store.eraseMessages` on SQLite: one `BEGIN IMMEDIATE` transaction removes the messages,
 * their vectors (every model's), the summaries that covered them, and the facts, relations and entities
 * only they stated, moves the conversations' counters and watermarks, and writes the audit entry. The
 * connection runs with `secure_delete` on, so freed cells are zeroed in the pages; after the commit the
 * WAL is checkpointed and truncated, so neither file holds the erased bytes (when no other connection
 * still reads an older snapshot, which would keep the WAL frames until it ends). The keyword and vector
 * copies in every process see the deletions through the per-user counts the triggers keep.
 */
export class SqliteMessageErasure {
  readonly #database: SqliteDatabase;
  readonly #statement: SqliteStatementCache;

  constructor(database: SqliteDatabase) {
    this.#database = database;
    this.#statement = createStatementCache(database);
  }

  erase(user: UserScope, unchecked: MessageSelection, options: EraseMessagesOptions): ErasureReceipt {
    const selection = checkMessageSelection(unchecked);
    const erasedAt = toEpochMs('now', options.now);
    const receipt = this.#database.transaction(() => this.#eraseLocked(user, selection, options, erasedAt)).immediate();
    if (receipt.messages > 0) this.#checkpoint();
    return receipt;
  }

  list(filter: { tenantId: string; userId?: string }): ErasureAuditEntry[] {
    const rows = (
      filter.userId === undefined
        ? this.#statement('SELECT * FROM erasures WHERE tenant_id = ? ORDER BY rowid').all(filter.tenantId)
        : this.#statement(`SELECT * FROM erasures WHERE ${ofUser} ORDER BY rowid`).all(filter.tenantId, filter.userId)
    ) as AuditRow[];
    return rows.map((row) =>
      Object.freeze({
        id: row.id,
        tenantId: row.tenant_id,
        userId: row.user_id,
        selection: JSON.parse(row.selection) as MessageSelection,
        erasedAt: toIsoTime(row.erased_at),
        ...(JSON.parse(row.counts) as ErasureCounts),
      }),
    );
  }

  #eraseLocked(
    user: UserScope,
    selection: MessageSelection,
    options: EraseMessagesOptions,
    erasedAt: number,
  ): ErasureReceipt {
    const key = [user.tenantId, user.userId] as const;
    const bounds = [
      selection.fromSeq ?? 1,
      selection.toSeq ?? Number.MAX_SAFE_INTEGER,
      selection.before === undefined ? Number.MAX_SAFE_INTEGER : toEpochMs('before', selection.before),
    ] as const;
    // One conversation's seq range goes through the (tenant, user, conversation, seq) key: the unary + keeps
    // the planner off the (tenant, user, created_at) index, which would scan all of the user's messages on
    // every step of a stepped erasure (as would one statement with "or the conversation is not given").
    const columns = 'rowid, conversation_id, seq, tokens, content';
    const rows = (
      selection.conversationId === undefined
        ? this.#statement(
            `SELECT ${columns} FROM messages WHERE ${ofUser} AND seq >= ? AND seq <= ? AND created_at < ?`,
          ).all(...key, ...bounds)
        : this.#statement(
            `SELECT ${columns} FROM messages WHERE ${ofUser} AND conversation_id = ? AND seq >= ? AND seq <= ? AND +created_at < ?`,
          ).all(...key, selection.conversationId, ...bounds)
    ) as ErasedRow[];
    const byConversation = groupBy(rows, (row) => row.conversation_id);
    let vectors = 0;
    let summaries = 0;
    // Through the (model, message) unique index: one probe per model, whichever model wrote the vector. The
    // unary + keeps the planner off the owner indexes, which scan all of the user's vectors for each row.
    const deleteVector = this.#statement(
      'DELETE FROM message_vectors WHERE model_id IN (SELECT id FROM embedding_models) AND message_rowid = ? AND +tenant_id = ? AND +user_id = ?',
    );
    const deleteMessage = this.#statement('DELETE FROM messages WHERE rowid = ?');
    for (const row of rows) {
      vectors += deleteVector.run(row.rowid, ...key).changes;
      deleteMessage.run(row.rowid);
    }
    for (const [conversationId, erased] of byConversation) {
      const scope = [...key, conversationId] as const;
      const first = erased.reduce((least, row) => Math.min(least, row.seq), Number.POSITIVE_INFINITY);
      // Summaries fold their predecessors, so every one from the first that covered an erased seq goes.
      summaries += this.#statement(`DELETE FROM summaries WHERE ${ofUser} AND conversation_id = ? AND to_seq >= ?`).run(
        ...scope,
        first,
      ).changes;
      const latest = this.#statement(
        `SELECT max(to_seq) AS seq FROM summaries WHERE ${ofUser} AND conversation_id = ?`,
      ).get(...scope) as {
        seq: number | null;
      };
      const watermark = latest.seq ?? 0;
      const covered = this.#statement(
        `SELECT coalesce(sum(tokens), 0) AS tokens FROM messages WHERE ${ofUser} AND conversation_id = ? AND seq <= ?`,
      ).get(...scope, watermark) as {
        tokens: number;
      };
      this.#statement(
        `UPDATE conversations SET total_tokens = total_tokens - ?, summarized_through_seq = ?, summarized_tokens = ?, erased_messages = erased_messages + ?
         WHERE ${ofUser} AND conversation_id = ?`,
      ).run(
        erased.reduce((sum, row) => sum + row.tokens, 0),
        watermark,
        covered.tokens,
        erased.length,
        ...scope,
      );
    }
    const knowledge = this.#eraseKnowledge(user, byConversation);
    const counts: ErasureCounts = {
      messages: rows.length,
      conversations: byConversation.size,
      vectors,
      summaries,
      ...knowledge,
      memoryFiles: options.memoryFiles ?? 0,
    };
    const auditId = crypto.randomUUID();
    this.#statement(
      'INSERT INTO erasures (id, tenant_id, user_id, selection, counts, erased_at) VALUES (?, ?, ?, ?, ?, ?)',
    ).run(auditId, ...key, JSON.stringify(selection), JSON.stringify(counts), erasedAt);
    return Object.freeze({ ...counts, auditId });
  }

  #eraseKnowledge(
    user: UserScope,
    byConversation: ReadonlyMap<string, readonly ErasedRow[]>,
  ): Pick<ErasureCounts, 'facts' | 'factsKept' | 'relations' | 'entities'> {
    if (byConversation.size === 0) return { facts: 0, factsKept: 0, relations: 0, entities: 0 };
    const key = [user.tenantId, user.userId] as const;
    const facts = (this.#statement(`SELECT * FROM facts WHERE ${ofUser} ORDER BY rowid`).all(...key) as FactRow[]).map(
      (row) => factFromRow(row, toIsoTime),
    );
    const relations = (
      this.#statement(`SELECT * FROM relations WHERE ${ofUser} ORDER BY rowid`).all(...key) as RelationRow[]
    ).map((row) => relationFromRow(row, toIsoTime));
    const erased = new Map(
      [...byConversation].map(([conversationId, rows]) => [conversationId, new Set(rows.map((row) => row.seq))]),
    );
    const entities = (
      this.#statement(`SELECT * FROM entities WHERE ${ofUser} ORDER BY rowid`).all(...key) as EntityRow[]
    ).map((row) => entityFromRow(row, toIsoTime));
    const erasedTexts = [...byConversation.values()].flatMap((rows) => rows.map((row) => row.content));
    const planned = planKnowledgeErasure(facts, relations, erased, { entities, erasedTexts });
    // An entity only erased messages named goes; one another stored message of the user names stays.
    const mentioned = this.#statement(
      `SELECT 1 FROM messages WHERE ${ofUser} AND instr(lower(content), ?) > 0 LIMIT 1`,
    );
    const names = new Set(planned.namedEntities.flatMap((named) => named.names));
    const edits = settleEntityNames(
      planned.namedEntities,
      new Set([...names].filter((name) => mentioned.get(...key, name) === undefined)),
    );
    const plan = { ...planned, deleteEntityIds: [...planned.deleteEntityIds, ...edits.deleteEntityIds] };
    for (const update of edits.updates) {
      this.#statement(`UPDATE entities SET aliases = ?, description = ? WHERE ${ofUser} AND id = ?`).run(
        JSON.stringify(update.aliases),
        update.description ?? null,
        ...key,
        update.id,
      );
      for (const name of update.removedNames)
        this.#statement(`DELETE FROM entity_names WHERE ${ofUser} AND name = ? AND entity_id = ?`).run(
          ...key,
          name,
          update.id,
        );
    }
    for (const id of plan.deleteFactIds)
      this.#statement(`DELETE FROM facts WHERE ${ofUser} AND id = ?`).run(...key, id);
    for (const update of plan.updateFacts) {
      this.#statement(`UPDATE facts SET source_seqs = ?, text = ? WHERE ${ofUser} AND id = ?`).run(
        JSON.stringify(update.sourceSeqs),
        update.text,
        ...key,
        update.id,
      );
    }
    for (const relink of plan.relinkFacts) {
      this.#statement(`UPDATE facts SET superseded_by = ?, valid_to = ? WHERE ${ofUser} AND id = ?`).run(
        relink.supersededBy ?? null,
        relink.validTo === undefined ? null : toEpochMs('validTo', relink.validTo),
        ...key,
        relink.id,
      );
    }
    for (const id of plan.deleteRelationIds)
      this.#statement(`DELETE FROM relations WHERE ${ofUser} AND id = ?`).run(...key, id);
    for (const update of plan.updateRelations) {
      this.#statement(`UPDATE relations SET source_seqs = ? WHERE ${ofUser} AND id = ?`).run(
        JSON.stringify(update.sourceSeqs),
        ...key,
        update.id,
      );
    }
    for (const id of plan.deleteEntityIds) {
      this.#statement(`DELETE FROM entity_names WHERE ${ofUser} AND entity_id = ?`).run(...key, id);
      this.#statement(`DELETE FROM entities WHERE ${ofUser} AND id = ?`).run(...key, id);
    }
    return {
      facts: plan.deleteFactIds.length,
      factsKept: plan.updateFacts.length,
      relations: plan.deleteRelationIds.length,
      entities: plan.deleteEntityIds.length,
    };
  }

  // Copies the WAL's pages into the file and truncates it, so the frames that held the erased rows are gone.
  // A reader of another connection still in an older snapshot keeps the frames it needs; SQLite then
  // checkpoints what it can and the next checkpoint (or the last connection's close) does the rest.
  #checkpoint(): void {
    this.#database.pragma('wal_checkpoint(TRUNCATE)');
  }
}
