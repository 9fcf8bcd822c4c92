import { MemoryError } from '@mnemo/core';
import { namesOf } from '@mnemo/core/internals';
import type { Entity, EntityInput, Fact, FactQuery, Relation, Scope, UserScope } from '@mnemo/core';
import type { NewFact, RelationInput } from '@mnemo/core/internals';
import {
  entityFromRow,
  erasedSourceConflict,
  type EntityRow,
  factFromRow,
  type FactRow,
  isFactVisible,
  mergeEntity,
  relationFromRow,
  type RelationRow,
} from '@mnemo/core/store-kit';
import type { SqliteDatabase } from './sqlite-driver.js';
import { createStatementCache, type SqliteStatementCache } from './sqlite-statement-cache.js';
import { scopeKey, toEpochMs, toIsoTime } from './sqlite-values.js';

const ofUser = 'tenant_id = ? AND user_id = ?';

/** The SQL of facts (supersession, never overwrite), the entity graph and progress cursors. */
export class SqliteKnowledgeStore {
  readonly #database: SqliteDatabase;
  readonly #statement: SqliteStatementCache;

  constructor(database: SqliteDatabase) {
    this.#database = database;
    this.#statement = createStatementCache(database);
  }

  insertFact(user: UserScope, fact: NewFact, options: { supersedes?: string } = {}): Fact {
    const { supersedes } = options;
    const validFrom = toEpochMs('validFrom', fact.validFrom);
    const createdAt = toEpochMs('createdAt', fact.createdAt);
    const expiresAt = fact.expiresAt === undefined ? null : toEpochMs('expiresAt', fact.expiresAt);
    return this.#database
      .transaction(() => {
        this.#checkSources('fact', user, fact);
        const id = crypto.randomUUID();
        if (supersedes !== undefined) {
          this.#currentFact(user, supersedes);
          this.#statement(`UPDATE facts SET valid_to = ?, superseded_by = ? WHERE ${ofUser} AND id = ?`).run(
            validFrom,
            id,
            user.tenantId,
            user.userId,
            supersedes,
          );
        }
        this.#statement(
          `INSERT INTO facts (id, tenant_id, user_id, subject, attribute, value, text, confidence, valid_from, source_conversation_id, source_seqs, extractor, created_at, expires_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(
          id,
          user.tenantId,
          user.userId,
          fact.subject,
          fact.attribute,
          fact.value,
          fact.text,
          fact.confidence,
          validFrom,
          fact.sourceConversationId ?? null,
          JSON.stringify(fact.sourceSeqs),
          fact.extractor,
          createdAt,
          expiresAt,
        );
        return this.#fact(user, id)!;
      })
      .immediate();
  }

  retireFact(user: UserScope, factId: string, at: string, options: { supersededBy?: string } = {}): Fact {
    const { supersededBy } = options;
    const atMs = toEpochMs('at', at);
    return this.#database
      .transaction(() => {
        this.#currentFact(user, factId);
        if (supersededBy !== undefined && this.#fact(user, supersededBy) === undefined) {
          throw new MemoryError('not_found', `fact ${supersededBy} does not exist`, {
            details: { factId: supersededBy },
          });
        }
        this.#statement(
          `UPDATE facts SET valid_to = ?, superseded_by = coalesce(?, superseded_by) WHERE ${ofUser} AND id = ?`,
        ).run(atMs, supersededBy ?? null, user.tenantId, user.userId, factId);
        return this.#fact(user, factId)!;
      })
      .immediate();
  }

  setFactExpiry(user: UserScope, factId: string, expiresAt: string | undefined): Fact {
    const atMs = expiresAt === undefined ? null : toEpochMs('expiresAt', expiresAt);
    return this.#database
      .transaction(() => {
        this.#currentFact(user, factId);
        this.#statement(`UPDATE facts SET expires_at = ? WHERE ${ofUser} AND id = ?`).run(
          atMs,
          user.tenantId,
          user.userId,
          factId,
        );
        return this.#fact(user, factId)!;
      })
      .immediate();
  }

  listFacts(user: UserScope, query: FactQuery = {}): Fact[] {
    // Few facts per user: the validity rules are the shared ones, applied to the user's rows.
    const rows = this.#statement(`SELECT * FROM facts WHERE ${ofUser} ORDER BY rowid`).all(
      user.tenantId,
      user.userId,
    ) as FactRow[];
    return rows.map(toFact).filter((fact) => isFactVisible(fact, query));
  }

  upsertEntity(user: UserScope, input: EntityInput, now: string): Entity {
    const nowMs = toEpochMs('now', now);
    return this.#database
      .transaction(() => {
        const names = namesOf(input);
        const found = names
          .map(
            (name) =>
              this.#statement(`SELECT entity_id FROM entity_names WHERE ${ofUser} AND name = ?`).get(
                user.tenantId,
                user.userId,
                name,
              ) as { entity_id: string } | undefined,
          )
          .find((row) => row !== undefined);
        if (found !== undefined) {
          const merged = mergeEntity(this.#entity(user, found.entity_id)!, input, now);
          this.#statement(
            `UPDATE entities SET type = ?, aliases = ?, description = ?, updated_at = ? WHERE ${ofUser} AND id = ?`,
          ).run(
            merged.type,
            JSON.stringify(merged.aliases),
            merged.description ?? null,
            nowMs,
            user.tenantId,
            user.userId,
            merged.id,
          );
          this.#indexNames(user, merged);
          return this.#entity(user, merged.id)!;
        }
        const id = crypto.randomUUID();
        const aliases = [...new Set(input.aliases ?? [])].filter(
          (alias) => alias.toLowerCase() !== input.name.toLowerCase(),
        );
        this.#statement(
          `INSERT INTO entities (id, tenant_id, user_id, name, type, aliases, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(
          id,
          user.tenantId,
          user.userId,
          input.name,
          input.type,
          JSON.stringify(aliases),
          input.description ?? null,
          nowMs,
          nowMs,
        );
        const created = this.#entity(user, id)!;
        this.#indexNames(user, created);
        return created;
      })
      .immediate();
  }

  listEntities(user: UserScope, query: { query?: string; ids?: readonly string[]; limit?: number } = {}): Entity[] {
    const rows = this.#statement(`SELECT * FROM entities WHERE ${ofUser} ORDER BY lower(name)`).all(
      user.tenantId,
      user.userId,
    ) as EntityRow[];
    const prefix = query.query?.toLowerCase();
    return rows
      .map(toEntity)
      .filter((entity) => query.ids === undefined || query.ids.includes(entity.id))
      .filter((entity) => prefix === undefined || namesOf(entity).some((name) => name.startsWith(prefix)))
      .slice(0, query.limit ?? 1000);
  }

  insertRelation(user: UserScope, input: RelationInput, now: string): Relation {
    const validFrom = toEpochMs('validFrom', input.validFrom);
    const nowMs = toEpochMs('now', now);
    return this.#database
      .transaction(() => {
        this.#checkSources('relation', user, input);
        for (const id of [input.subjectId, input.objectId]) {
          if (this.#entity(user, id) === undefined)
            throw new MemoryError('not_found', `entity ${id} does not exist`, { details: { entityId: id } });
        }
        const existing = this.#statement(
          `SELECT * FROM relations WHERE ${ofUser} AND subject_id = ? AND predicate = ? AND object_id = ? AND valid_to IS NULL`,
        ).get(user.tenantId, user.userId, input.subjectId, input.predicate, input.objectId) as RelationRow | undefined;
        if (existing !== undefined) return toRelation(existing);
        const id = crypto.randomUUID();
        this.#statement(
          `INSERT INTO relations (id, tenant_id, user_id, subject_id, predicate, object_id, valid_from, source_conversation_id, source_seqs, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(
          id,
          user.tenantId,
          user.userId,
          input.subjectId,
          input.predicate,
          input.objectId,
          validFrom,
          input.sourceConversationId ?? null,
          JSON.stringify(input.sourceSeqs),
          nowMs,
        );
        return toRelation(
          this.#statement(`SELECT * FROM relations WHERE ${ofUser} AND id = ?`).get(
            user.tenantId,
            user.userId,
            id,
          ) as RelationRow,
        );
      })
      .immediate();
  }

  retireRelation(user: UserScope, relationId: string, at: string): Relation {
    const atMs = toEpochMs('at', at);
    return this.#database
      .transaction(() => {
        const row = this.#statement(`SELECT * FROM relations WHERE ${ofUser} AND id = ?`).get(
          user.tenantId,
          user.userId,
          relationId,
        ) as RelationRow | undefined;
        if (row === undefined) throw new MemoryError('not_found', `relation ${relationId} does not exist`);
        if (row.valid_to !== null) throw new MemoryError('conflict', `relation ${relationId} is no longer current`);
        this.#statement(`UPDATE relations SET valid_to = ? WHERE ${ofUser} AND id = ?`).run(
          atMs,
          user.tenantId,
          user.userId,
          relationId,
        );
        return toRelation({ ...row, valid_to: atMs });
      })
      .immediate();
  }

  listRelations(user: UserScope, query: { entityIds: readonly string[]; includeHistory?: boolean }): Relation[] {
    if (query.entityIds.length === 0) return [];
    const ids = query.entityIds.map(() => '?').join(', ');
    const current = query.includeHistory === true ? '' : 'AND valid_to IS NULL';
    const rows = this.#statement(
      `SELECT * FROM relations WHERE ${ofUser} ${current} AND (subject_id IN (${ids}) OR object_id IN (${ids})) ORDER BY rowid`,
    ).all(user.tenantId, user.userId, ...query.entityIds, ...query.entityIds) as RelationRow[];
    return rows.map(toRelation);
  }

  getCursor(scope: Scope, name: string): number {
    const row = this.#statement(
      `SELECT position FROM cursors WHERE tenant_id = ? AND user_id = ? AND conversation_id = ? AND name = ?`,
    ).get(...scopeKey(scope), name) as { position: number } | undefined;
    return row?.position ?? 0;
  }

  advanceCursor(scope: Scope, name: string, expected: number, next: number): void {
    this.#database
      .transaction(() => {
        const exists = this.#statement(
          'SELECT 1 FROM conversations WHERE tenant_id = ? AND user_id = ? AND conversation_id = ?',
        ).get(...scopeKey(scope));
        if (exists === undefined)
          throw new MemoryError('not_found', `conversation ${scope.conversationId} does not exist`);
        const current = this.getCursor(scope, name);
        if (current !== expected)
          throw new MemoryError('conflict', `cursor ${name} is at ${current}, not ${expected}`, {
            details: { name, current, expected },
          });
        this.#statement(
          `INSERT INTO cursors (tenant_id, user_id, conversation_id, name, position) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (tenant_id, user_id, conversation_id, name) DO UPDATE SET position = excluded.position`,
        ).run(...scopeKey(scope), name, next);
      })
      .immediate();
  }

  /** Removes the cursors of one conversation (inside the caller's erase transaction). */
  deleteConversation(scope: Scope): void {
    this.#statement('DELETE FROM cursors WHERE tenant_id = ? AND user_id = ? AND conversation_id = ?').run(
      ...scopeKey(scope),
    );
  }

  /** Removes every fact, entity, relation and cursor of a user (inside the caller's erase transaction). */
  deleteUser(user: UserScope): void {
    for (const table of ['facts', 'entities', 'entity_names', 'relations', 'cursors']) {
      this.#statement(`DELETE FROM ${table} WHERE ${ofUser}`).run(user.tenantId, user.userId);
    }
  }

  // A job that read messages erased since (none of its sources is stored) loses its write: `conflict`.
  #checkSources(
    kind: 'fact' | 'relation',
    user: UserScope,
    source: { sourceConversationId?: string; sourceSeqs: readonly number[] },
  ): void {
    const conversationId = source.sourceConversationId;
    if (conversationId === undefined || source.sourceSeqs.length === 0) return;
    const erased = this.#statement(
      `SELECT erased_messages FROM conversations WHERE ${ofUser} AND conversation_id = ?`,
    ).get(user.tenantId, user.userId, conversationId) as { erased_messages: number } | undefined;
    if (erased === undefined || erased.erased_messages === 0) return;
    const stored = this.#statement(
      `SELECT 1 FROM messages WHERE ${ofUser} AND conversation_id = ? AND seq IN (SELECT value FROM json_each(?)) LIMIT 1`,
    ).get(user.tenantId, user.userId, conversationId, JSON.stringify(source.sourceSeqs));
    if (stored === undefined) throw erasedSourceConflict(kind, conversationId, source.sourceSeqs);
  }

  #indexNames(user: UserScope, entity: Entity): void {
    for (const name of namesOf(entity)) {
      this.#statement(
        `INSERT OR IGNORE INTO entity_names (tenant_id, user_id, name, entity_id) VALUES (?, ?, ?, ?)`,
      ).run(user.tenantId, user.userId, name, entity.id);
    }
  }

  #entity(user: UserScope, id: string): Entity | undefined {
    const row = this.#statement(`SELECT * FROM entities WHERE ${ofUser} AND id = ?`).get(
      user.tenantId,
      user.userId,
      id,
    ) as EntityRow | undefined;
    return row === undefined ? undefined : toEntity(row);
  }

  #fact(user: UserScope, id: string): Fact | undefined {
    const row = this.#statement(`SELECT * FROM facts WHERE ${ofUser} AND id = ?`).get(
      user.tenantId,
      user.userId,
      id,
    ) as FactRow | undefined;
    return row === undefined ? undefined : toFact(row);
  }

  #currentFact(user: UserScope, id: string): Fact {
    const fact = this.#fact(user, id);
    if (fact === undefined)
      throw new MemoryError('not_found', `fact ${id} does not exist`, { details: { factId: id } });
    if (fact.validTo !== undefined)
      throw new MemoryError('conflict', `fact ${id} is no longer current`, { details: { factId: id } });
    return fact;
  }
}

const toFact = (row: FactRow): Fact => factFromRow(row, toIsoTime);
const toEntity = (row: EntityRow): Entity => entityFromRow(row, toIsoTime);
const toRelation = (row: RelationRow): Relation => relationFromRow(row, toIsoTime);
