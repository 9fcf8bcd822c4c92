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
import type { PostgresClient, PostgresPool, PostgresQueryable } from './postgres-driver.js';
import { inConversation } from './postgres-message-store.js';
import type { PostgresTables } from './postgres-tables.js';
import { runInTransaction } from './postgres-transaction.js';
import { checkCount, checkTime, scopeKey, toInteger, toIsoTime } from './postgres-values.js';

const ofUser = 'tenant_id = $1 AND user_id = $2';
const factColumns =
  'id, tenant_id, user_id, subject, attribute, value, text, confidence, valid_from, valid_to, superseded_by, source_conversation_id, source_seqs, extractor, created_at, expires_at';
const entityColumns = 'id, tenant_id, user_id, name, type, aliases, description, created_at, updated_at';
const relationColumns =
  'id, tenant_id, user_id, subject_id, predicate, object_id, valid_from, valid_to, source_conversation_id, source_seqs, created_at';

function statements(t: PostgresTables) {
  return {
    // Serializes the graph writes of one user (the key is hashed to a 64-bit advisory lock): two extractors
    // meeting the same new name, or the same relation, at once must not both insert it.
    lockGraph: 'SELECT pg_advisory_xact_lock(hashtextextended($1, 0))',
    lockFact: `SELECT ${factColumns} FROM ${t.facts} WHERE ${ofUser} AND id = $3 FOR UPDATE`,
    endFact: `UPDATE ${t.facts} SET valid_to = $4, superseded_by = coalesce($5, superseded_by) WHERE ${ofUser} AND id = $3 RETURNING ${factColumns}`,
    insertFact: `INSERT INTO ${t.facts} (${factColumns})
      VALUES ($3, $1, $2, $4, $5, $6, $7, $8, $9, NULL, NULL, $10, $11::json, $12, $13, $14) RETURNING ${factColumns}`,
    setFactExpiry: `UPDATE ${t.facts} SET expires_at = $4 WHERE ${ofUser} AND id = $3 RETURNING ${factColumns}`,
    selectFacts: `SELECT ${factColumns} FROM ${t.facts} WHERE ${ofUser} ORDER BY position`,
    selectFact: `SELECT id FROM ${t.facts} WHERE ${ofUser} AND id = $3`,
    selectNames: `SELECT name, entity_id FROM ${t.entityNames} WHERE ${ofUser} AND name = ANY($3::text[])`,
    selectEntity: `SELECT ${entityColumns} FROM ${t.entities} WHERE ${ofUser} AND id = $3`,
    selectEntities: `SELECT ${entityColumns} FROM ${t.entities} WHERE ${ofUser} ORDER BY lower(name) COLLATE "C", position`,
    updateEntity: `UPDATE ${t.entities} SET type = $4, aliases = $5::json, description = $6, updated_at = $7 WHERE ${ofUser} AND id = $3
      RETURNING ${entityColumns}`,
    insertEntity: `INSERT INTO ${t.entities} (${entityColumns}) VALUES ($3, $1, $2, $4, $5, $6::json, $7, $8, $8) RETURNING ${entityColumns}`,
    indexNames: `INSERT INTO ${t.entityNames} (tenant_id, user_id, name, entity_id) SELECT $1, $2, name, $3 FROM unnest($4::text[]) AS name
      ON CONFLICT DO NOTHING`,
    countEntities: `SELECT id FROM ${t.entities} WHERE ${ofUser} AND id = ANY($3::text[])`,
    selectCurrentRelation: `SELECT ${relationColumns} FROM ${t.relations}
      WHERE ${ofUser} AND subject_id = $3 AND predicate = $4 AND object_id = $5 AND valid_to IS NULL ORDER BY position LIMIT 1`,
    insertRelation: `INSERT INTO ${t.relations} (${relationColumns}) VALUES ($3, $1, $2, $4, $5, $6, $7, NULL, $8, $9::json, $10) RETURNING ${relationColumns}`,
    lockRelation: `SELECT ${relationColumns} FROM ${t.relations} WHERE ${ofUser} AND id = $3 FOR UPDATE`,
    endRelation: `UPDATE ${t.relations} SET valid_to = $4 WHERE ${ofUser} AND id = $3 RETURNING ${relationColumns}`,
    selectRelations: `SELECT ${relationColumns} FROM ${t.relations} WHERE ${ofUser} AND (subject_id = ANY($3::text[]) OR object_id = ANY($3::text[]))
      AND ($4 OR valid_to IS NULL) ORDER BY position`,
    selectCursor: `SELECT position FROM ${t.cursors} WHERE ${inConversation} AND name = $4`,
    conversationExists: `SELECT 1 FROM ${t.conversations} WHERE ${inConversation}`,
    // Compare-and-set in one statement: from 0 the mark may not exist yet (insert), from n it must be at n.
    createCursor: `INSERT INTO ${t.cursors} AS cursor (tenant_id, user_id, conversation_id, name, position)
      SELECT tenant_id, user_id, conversation_id, $4, $5 FROM ${t.conversations} WHERE ${inConversation}
      ON CONFLICT (tenant_id, user_id, conversation_id, name) DO UPDATE SET position = excluded.position WHERE cursor.position = 0
      RETURNING position`,
    moveCursor: `UPDATE ${t.cursors} SET position = $5 WHERE ${inConversation} AND name = $4 AND position = $6 RETURNING position`,
    deleteUser: [t.facts, t.entityNames, t.entities, t.relations].map(
      (table) => `DELETE FROM ${table} WHERE ${ofUser}`,
    ),
  };
}

/** The SQL of facts (supersession, never overwrite), the entity graph and progress cursors. */
export class PostgresKnowledgeStore {
  readonly #pool: PostgresPool;
  readonly #tables: PostgresTables;
  readonly #sql: ReturnType<typeof statements>;

  constructor(pool: PostgresPool, tables: PostgresTables) {
    this.#pool = pool;
    this.#tables = tables;
    this.#sql = statements(tables);
  }

  /** Stores a fact; with `supersedes`, ends the old one under its row lock in the same transaction. */
  async insertFact(user: UserScope, fact: NewFact, options: { supersedes?: string } = {}): Promise<Fact> {
    const { supersedes } = options;
    const validFrom = checkTime('validFrom', fact.validFrom);
    const createdAt = checkTime('createdAt', fact.createdAt);
    const expiresAt = fact.expiresAt === undefined ? null : checkTime('expiresAt', fact.expiresAt);
    fact.sourceSeqs.forEach((seq) => checkCount('sourceSeqs', seq));
    return runInTransaction(this.#pool, async (client) => {
      await this.#checkSources(client, 'fact', user, fact);
      const id = crypto.randomUUID();
      if (supersedes !== undefined) {
        await this.#lockCurrentFact(client, user, supersedes);
        await client.query(this.#sql.endFact, [user.tenantId, user.userId, supersedes, validFrom, id]);
      }
      const row = (
        await client.query<FactRow>(this.#sql.insertFact, [
          user.tenantId,
          user.userId,
          id,
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
        ])
      ).rows[0]!;
      return toFact(row);
    });
  }

  /** Ends a current fact at `at`, linked to its successor when given; `not_found` / `conflict` (already ended). */
  async retireFact(
    user: UserScope,
    factId: string,
    at: string,
    options: { supersededBy?: string } = {},
  ): Promise<Fact> {
    const { supersededBy } = options;
    const time = checkTime('at', at);
    return runInTransaction(this.#pool, async (client) => {
      await this.#lockCurrentFact(client, user, factId);
      if (
        supersededBy !== undefined &&
        (await client.query(this.#sql.selectFact, [user.tenantId, user.userId, supersededBy])).rows.length === 0
      ) {
        throw new MemoryError('not_found', `fact ${supersededBy} does not exist`, {
          details: { factId: supersededBy },
        });
      }
      return toFact(
        (
          await client.query<FactRow>(this.#sql.endFact, [
            user.tenantId,
            user.userId,
            factId,
            time,
            supersededBy ?? null,
          ])
        ).rows[0]!,
      );
    });
  }

  /** Sets or clears when a current fact expires; `not_found` / `conflict` (already ended). */
  async setFactExpiry(user: UserScope, factId: string, expiresAt: string | undefined): Promise<Fact> {
    const time = expiresAt === undefined ? null : checkTime('expiresAt', expiresAt);
    return runInTransaction(this.#pool, async (client) => {
      await this.#lockCurrentFact(client, user, factId);
      return toFact(
        (await client.query<FactRow>(this.#sql.setFactExpiry, [user.tenantId, user.userId, factId, time])).rows[0]!,
      );
    });
  }

  /** A user's facts as the query asks, oldest first: the shared validity rules applied to the user's (few) rows. */
  async listFacts(user: UserScope, query: FactQuery = {}): Promise<Fact[]> {
    const rows = (await this.#pool.query<FactRow>(this.#sql.selectFacts, [user.tenantId, user.userId])).rows;
    return rows.map(toFact).filter((fact) => isFactVisible(fact, query));
  }

  /** Inserts an entity, or merges it into the one with the same name or alias (case-insensitive). */
  async upsertEntity(user: UserScope, input: EntityInput, now: string): Promise<Entity> {
    const time = checkTime('now', now);
    return runInTransaction(this.#pool, async (client) => {
      await this.#lockGraph(client, user);
      const key = [user.tenantId, user.userId];
      const names = namesOf(input);
      const owners = (await client.query<{ name: string; entity_id: string }>(this.#sql.selectNames, [...key, names]))
        .rows;
      // The first of the input's names (its name, then its aliases) that is known decides, as in every store.
      const foundId = names
        .map((name) => owners.find((owner) => owner.name === name)?.entity_id)
        .find((id) => id !== undefined);
      const found =
        foundId === undefined
          ? undefined
          : (await client.query<EntityRow>(this.#sql.selectEntity, [...key, foundId])).rows[0];
      let entity: Entity;
      if (found !== undefined) {
        const merged = mergeEntity(toEntity(found), input, time);
        const parameters = [
          ...key,
          merged.id,
          merged.type,
          JSON.stringify(merged.aliases),
          merged.description ?? null,
          time,
        ];
        entity = toEntity((await client.query<EntityRow>(this.#sql.updateEntity, parameters)).rows[0]!);
      } else {
        const aliases = [...new Set(input.aliases ?? [])].filter(
          (alias) => alias.toLowerCase() !== input.name.toLowerCase(),
        );
        const parameters = [
          ...key,
          crypto.randomUUID(),
          input.name,
          input.type,
          JSON.stringify(aliases),
          input.description ?? null,
          time,
        ];
        entity = toEntity((await client.query<EntityRow>(this.#sql.insertEntity, parameters)).rows[0]!);
      }
      await client.query(this.#sql.indexNames, [...key, entity.id, namesOf(entity)]);
      return entity;
    });
  }

  /** A user's entities by name; `query` matches a name or alias prefix, case-insensitively. */
  async listEntities(
    user: UserScope,
    query: { query?: string; ids?: readonly string[]; limit?: number } = {},
  ): Promise<Entity[]> {
    const rows = (await this.#pool.query<EntityRow>(this.#sql.selectEntities, [user.tenantId, user.userId])).rows;
    const prefix = query.query?.toLowerCase();
    return rows
      .map(toEntity)
      .filter((entity) => query.ids === undefined || query.ids.includes(entity.id))
      .filter((entity) => prefix === undefined || namesOf(entity).some((name) => name.startsWith(prefix)))
      .slice(0, query.limit ?? 1000);
  }

  /** Stores a relation between two of the user's entities; an identical current one is returned instead. */
  async insertRelation(user: UserScope, input: RelationInput, now: string): Promise<Relation> {
    const validFrom = checkTime('validFrom', input.validFrom);
    const time = checkTime('now', now);
    input.sourceSeqs.forEach((seq) => checkCount('sourceSeqs', seq));
    return runInTransaction(this.#pool, async (client) => {
      await this.#lockGraph(client, user);
      await this.#checkSources(client, 'relation', user, input);
      const key = [user.tenantId, user.userId];
      const known = new Set(
        (
          await client.query<{ id: string }>(this.#sql.countEntities, [...key, [input.subjectId, input.objectId]])
        ).rows.map((row) => row.id),
      );
      for (const id of [input.subjectId, input.objectId]) {
        if (!known.has(id))
          throw new MemoryError('not_found', `entity ${id} does not exist`, { details: { entityId: id } });
      }
      const existing = (
        await client.query<RelationRow>(this.#sql.selectCurrentRelation, [
          ...key,
          input.subjectId,
          input.predicate,
          input.objectId,
        ])
      ).rows[0];
      if (existing !== undefined) return toRelation(existing);
      const parameters = [
        ...key,
        crypto.randomUUID(),
        input.subjectId,
        input.predicate,
        input.objectId,
        validFrom,
        input.sourceConversationId ?? null,
        JSON.stringify(input.sourceSeqs),
        time,
      ];
      return toRelation((await client.query<RelationRow>(this.#sql.insertRelation, parameters)).rows[0]!);
    });
  }

  /** Ends a current relation at `at`; `not_found` / `conflict` (already ended). */
  async retireRelation(user: UserScope, relationId: string, at: string): Promise<Relation> {
    const time = checkTime('at', at);
    return runInTransaction(this.#pool, async (client) => {
      const key = [user.tenantId, user.userId, relationId];
      const row = (await client.query<RelationRow>(this.#sql.lockRelation, key)).rows[0];
      if (row === undefined) throw new MemoryError('not_found', `relation ${relationId} does not exist`);
      if (row.valid_to !== null) throw new MemoryError('conflict', `relation ${relationId} is no longer current`);
      return toRelation((await client.query<RelationRow>(this.#sql.endRelation, [...key, time])).rows[0]!);
    });
  }

  /** Relations touching any of `entityIds`: current ones, or all with `includeHistory`; oldest first. */
  async listRelations(
    user: UserScope,
    query: { entityIds: readonly string[]; includeHistory?: boolean },
  ): Promise<Relation[]> {
    if (query.entityIds.length === 0) return [];
    const parameters = [user.tenantId, user.userId, [...query.entityIds], query.includeHistory === true];
    return (await this.#pool.query<RelationRow>(this.#sql.selectRelations, parameters)).rows.map(toRelation);
  }

  /** A conversation's named progress mark; 0 when unset. */
  async getCursor(scope: Scope, name: string): Promise<number> {
    return readCursor(this.#pool, this.#sql.selectCursor, scope, name);
  }

  /** Moves a mark from `expected` to `next` in one statement; `conflict` when another worker moved it, `not_found` without the conversation. */
  async advanceCursor(scope: Scope, name: string, expected: number, next: number): Promise<void> {
    checkCount('expected', expected);
    checkCount('next', next);
    const key = scopeKey(scope);
    const moved =
      expected === 0
        ? await this.#pool.query(this.#sql.createCursor, [...key, name, next])
        : await this.#pool.query(this.#sql.moveCursor, [...key, name, next, expected]);
    if ((moved.rowCount ?? 0) > 0) return;
    // Read only to word the error: the compare-and-set itself already failed atomically.
    if ((await this.#pool.query(this.#sql.conversationExists, key)).rowCount === 0) {
      throw new MemoryError('not_found', `conversation ${scope.conversationId} does not exist`);
    }
    const current = await readCursor(this.#pool, this.#sql.selectCursor, scope, name);
    throw new MemoryError('conflict', `cursor ${name} is at ${current}, not ${expected}`, {
      details: { name, current, expected },
    });
  }

  /** Removes every fact, entity and relation of a user, inside the caller's erase transaction. */
  async deleteUser(client: PostgresClient, user: UserScope): Promise<void> {
    for (const query of this.#sql.deleteUser) await client.query(query, [user.tenantId, user.userId]);
  }

  // A job that read messages erased since (none of its sources is stored) loses its write: `conflict`.
  async #checkSources(
    client: PostgresClient,
    kind: 'fact' | 'relation',
    user: UserScope,
    source: { sourceConversationId?: string; sourceSeqs: readonly number[] },
  ): Promise<void> {
    const conversationId = source.sourceConversationId;
    if (conversationId === undefined || source.sourceSeqs.length === 0) return;
    const row = (
      await client.query<{ erased: boolean; stored: boolean }>(
        `SELECT c.erased_messages > 0 AS erased, EXISTS (SELECT 1 FROM ${this.#tables.messages} m
           WHERE m.tenant_id = $1 AND m.user_id = $2 AND m.conversation_id = $3 AND m.seq = ANY($4::bigint[])) AS stored
         FROM ${this.#tables.conversations} c WHERE c.tenant_id = $1 AND c.user_id = $2 AND c.conversation_id = $3`,
        [user.tenantId, user.userId, conversationId, source.sourceSeqs],
      )
    ).rows[0];
    if (row?.erased === true && !row.stored) throw erasedSourceConflict(kind, conversationId, source.sourceSeqs);
  }

  async #lockGraph(client: PostgresClient, user: UserScope): Promise<void> {
    // Control characters cannot occur in ids (resolveScope refuses them), so \u001f separates unambiguously.
    await client.query(this.#sql.lockGraph, [
      [this.#tables.schema, 'graph', user.tenantId, user.userId].join('\u001f'),
    ]);
  }

  async #lockCurrentFact(client: PostgresClient, user: UserScope, id: string): Promise<void> {
    const row = (await client.query<FactRow>(this.#sql.lockFact, [user.tenantId, user.userId, id])).rows[0];
    if (row === undefined) throw new MemoryError('not_found', `fact ${id} does not exist`, { details: { factId: id } });
    if (row.valid_to !== null)
      throw new MemoryError('conflict', `fact ${id} is no longer current`, { details: { factId: id } });
  }
}

async function readCursor(queryable: PostgresQueryable, query: string, scope: Scope, name: string): Promise<number> {
  const row = (await queryable.query<{ position: unknown }>(query, [...scopeKey(scope), name])).rows[0];
  return row === undefined ? 0 : toInteger(row.position);
}

const toFact = (row: FactRow): Fact => factFromRow(row, toIsoTime);
const toEntity = (row: EntityRow): Entity => entityFromRow(row, toIsoTime);
const toRelation = (row: RelationRow): Relation => relationFromRow(row, toIsoTime);
