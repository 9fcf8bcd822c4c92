import { type Scope } from '@mnemo/core';
import { keywordTerms } from '@mnemo/core/internals';
import type { SearchHit } from '@mnemo/core/store-kit';
import { makeNewMessage } from '@mnemo/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestSchemas, describeWithPostgres } from '../test/postgres-test-database.js';
import { searchKeywordIndexed } from './postgres-keyword-search.js';
import { migratePostgresSchema, postgresMigrations } from './postgres-migrations.js';
import { combinations, qualifyingTermSets, termScoreBound } from './postgres-pruned-keyword-search.js';
import { createPostgresStore, type PostgresStore } from './postgres-store.js';
import { postgresTables } from './postgres-tables.js';

describe('keyword search pruning', () => {
  it('lists every set of a size once, in order', () => {
    expect(combinations(4, 2)).toEqual([
      [0, 1],
      [0, 2],
      [1, 2],
      [0, 3],
      [1, 3],
      [2, 3],
    ]);
    expect(combinations(3, 3)).toEqual([[0, 1, 2]]);
  });

  it('keeps only the smallest sets of terms whose bounds pass the threshold', () => {
    expect(qualifyingTermSets([5, 1, 1, 3], 4)).toEqual([[0], [1, 2, 3]]);
    expect(qualifyingTermSets([1, 1], 5)).toEqual([]);
    expect(qualifyingTermSets([2, 2, 2], 0)).toEqual([[0], [1], [2]]);
  });

  it('bounds a term above what it adds to any message, however often it occurs', () => {
    const term = { lexeme: 'relay', documents: 40, maxFrequency: 3, minLength: 2 };
    const idf = Math.log(1 + (1000 - 40 + 0.5) / 40.5);
    for (const [frequency, length] of [
      [1, 2],
      [3, 2],
      [3, 40],
      [1, 9],
    ] as const) {
      const part = (frequency * 2.2) / (frequency + 1.2 * (0.25 + (0.75 * length) / 9));
      expect(termScoreBound(term, 1000, 9)).toBeGreaterThan(idf * part);
    }
  });
});

// A Zipf-like vocabulary: a few words in most messages, many in few, so that queries mix common and rare words.
const vocabulary = Array.from({ length: 120 }, (_, index) => `w${index}x`);
function messageText(index: number): string {
  const words: string[] = [];
  const length = 3 + (index % 9);
  for (let position = 0; position < length; position += 1) {
    const draw = ((index * 7919 + position * 104_729) % 10_007) / 10_007;
    words.push(vocabulary[Math.floor(vocabulary.length * draw ** 3)]!);
  }
  return `${words.join(' ')} n${index}`;
}

const tenantId = 'tenant-prune';

describeWithPostgres('PostgreSQL keyword search with top-k pruning', (url) => {
  const schemas = createTestSchemas(url);
  const schema = schemas.fresh();
  const tables = postgresTables(schema);
  let store: PostgresStore;
  const user = { tenantId, userId: 'user-heavy' };

  async function seed(target: PostgresStore, scope: Scope, from: number, count: number): Promise<void> {
    const start = Date.UTC(2024, 0, 1) + from * 60_000;
    await target.appendMessages(
      scope,
      Array.from({ length: count }, (_, index) =>
        makeNewMessage(messageText(from + index), { createdAt: new Date(start + index * 60_000).toISOString() }),
      ),
    );
  }

  /** Rows of `keyword_terms` that a recount from the messages does not give, either way. */
  async function driftFromRecount(inSchema: string): Promise<unknown[]> {
    const t = postgresTables(inSchema);
    const recount = `SELECT m.tenant_id, m.user_id, l.lexeme, count(*)::bigint AS documents FROM ${t.messages} m
      CROSS JOIN LATERAL unnest(tsvector_to_array(m.search_vector)) AS l (lexeme) GROUP BY 1, 2, 3`;
    const kept = `SELECT tenant_id, user_id, lexeme, documents FROM ${t.keywordTerms}`;
    return (
      await schemas.pool.query<Record<string, unknown>>(
        `(${recount} EXCEPT ${kept}) UNION ALL (${kept} EXCEPT ${recount})`,
      )
    ).rows;
  }

  beforeAll(async () => {
    store = await createPostgresStore({ connectionString: url, schema, poolMax: 4 });
    for (let conversation = 0; conversation < 4; conversation += 1)
      await seed(store, { ...user, conversationId: `conv-${conversation}` }, conversation * 3000, 3000);
    await seed(store, { tenantId, userId: 'user-other', conversationId: 'conv-0' }, 0, 300);
    await schemas.pool.query(`VACUUM ANALYZE ${tables.messages}, ${tables.keywordTerms}`);
  }, 120_000);

  afterAll(async () => {
    await store?.close();
    await schemas.dropAll();
    await schemas.close();
  });

  it('returns the hits and scores of the unpruned statement when queries mix common and rare words', async () => {
    const rounded = (hits: readonly SearchHit[]) => hits.map((hit) => hit.score);
    // Ties (equal scores) go to the newest message; two conversations may hold a message with the same time and seq.
    const identity = (hit: SearchHit) => `${hit.message.createdAt}#${hit.message.seq}`;
    let checked = 0;
    for (let index = 0; index < 40; index += 1) {
      const words = messageText(index * 97 + 5)
        .split(' ')
        .slice(0, 1 + (index % 6));
      if (index % 4 === 0) words.push(`n${index * 31}`);
      for (const k of [1, 10, 50]) {
        const pruned = await store.searchKeyword(user, keywordTerms(words.join(' ')), { k });
        const unpruned = await searchKeywordIndexed(schemas.pool, tables, user, keywordTerms(words.join(' ')), { k });
        expect(rounded(pruned), words.join(' ')).toEqual(rounded(unpruned));
        expect(pruned.map(identity), words.join(' ')).toEqual(unpruned.map(identity));
        expect(
          pruned.every((hit) => hit.conversationId.startsWith('conv-') && hit.message.content.includes(' n')),
        ).toBe(true);
        checked += pruned.length;
      }
    }
    expect(checked).toBeGreaterThan(1000);
  });

  it("never returns another user's messages, even for a word only that user holds", async () => {
    const other = { tenantId, userId: 'user-other' };
    const hits = await store.searchKeyword(other, ['w0x', 'w1x', 'n3999'], { k: 50 });
    expect(hits.length).toBe(50);
    expect(hits.every((hit) => Number(hit.message.content.split(' n').at(-1)) < 300)).toBe(true);
    expect(await store.searchKeyword({ tenantId: 'tenant-none', userId: 'user-heavy' }, ['w0x'], { k: 5 })).toEqual([]);
  });

  it('keeps the document frequencies equal to a recount through appends, conversation deletes and user erases', async () => {
    const scratch = schemas.fresh();
    const other = await createPostgresStore({ connectionString: url, schema: scratch, poolMax: 2 });
    try {
      const scope = { tenantId, userId: 'user-a', conversationId: 'conv-a' };
      await seed(other, scope, 0, 200);
      await seed(other, { ...scope, conversationId: 'conv-b' }, 200, 100);
      await seed(other, { ...scope, userId: 'user-b' }, 0, 50);
      expect(await driftFromRecount(scratch)).toEqual([]);
      await other.deleteConversation(scope);
      expect(await driftFromRecount(scratch)).toEqual([]);
      await other.deleteUser({ tenantId, userId: 'user-b' });
      expect(await driftFromRecount(scratch)).toEqual([]);
      const left = await schemas.pool.query<{ users: string[] }>(
        `SELECT array_agg(DISTINCT user_id) AS users FROM ${postgresTables(scratch).keywordTerms}`,
      );
      expect(left.rows[0]!.users).toEqual(['user-a']);
      const hits = await other.searchKeyword({ tenantId, userId: 'user-a' }, ['n250'], { k: 5 });
      expect(hits.map((hit) => hit.message.content)).toEqual([messageText(250)]);
    } finally {
      await other.close();
    }
  });

  it('backfills the document frequencies of a version 5 schema when it migrates', async () => {
    const old = schemas.fresh();
    const pool = schemas.pool;
    await migratePostgresSchema(pool, { schema: old, migrations: postgresMigrations.slice(0, 5) });
    const t = postgresTables(old);
    await pool.query(
      `INSERT INTO ${t.conversations} (tenant_id, user_id, conversation_id, created_at, updated_at, message_count, total_tokens, search_length) VALUES ($1, 'u', 'c', now(), now(), 3, 3, 0)`,
      [tenantId],
    );
    await pool.query(
      `INSERT INTO ${t.messages} (tenant_id, user_id, conversation_id, seq, id, role, content, created_at, tokens) VALUES
        ($1, 'u', 'c', 1, 'm1', 'user', 'relay ridge is down', now(), 1), ($1, 'u', 'c', 2, 'm2', 'assistant', 'the ridge relay again', now(), 1),
        ($1, 'u', 'c', 3, 'm3', 'user', 'battery at ridge camp', now(), 1)`,
      [tenantId],
    );
    await pool.query(
      `UPDATE ${t.conversations} SET search_length = (SELECT sum(length(search_vector)) FROM ${t.messages})`,
    );
    const migrated = await createPostgresStore({ connectionString: url, schema: old, poolMax: 2 });
    try {
      expect(await driftFromRecount(old)).toEqual([]);
      const ridge = await pool.query<{ documents: string }>(
        `SELECT documents FROM ${t.keywordTerms} WHERE lexeme = 'ridg'`,
      );
      expect(Number(ridge.rows[0]!.documents)).toBe(3);
      const hits = await migrated.searchKeyword({ tenantId, userId: 'u' }, ['relay', 'battery'], { k: 2 });
      const unpruned = await searchKeywordIndexed(pool, t, { tenantId, userId: 'u' }, ['relay', 'battery'], { k: 2 });
      expect(hits).toEqual(unpruned);
    } finally {
      await migrated.close();
    }
  });
});
