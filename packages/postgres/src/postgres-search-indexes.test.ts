import { HashedEmbedder, type Scope } from '@mnemo/core';
import { keywordTerms } from '@mnemo/core/internals';
import { makeNewMessage } from '@mnemo/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestSchemas, describeWithPostgres } from '../test/postgres-test-database.js';
import { keywordQueryWords, keywordSearchStatement } from './postgres-keyword-search.js';
import {
  hnswEfSearch,
  toVectorLiteral,
  vectorSearchSettings,
  vectorSearchStatement,
} from './postgres-pgvector-search.js';
import { createPostgresStore, type PostgresStore } from './postgres-store.js';
import { postgresTables } from './postgres-tables.js';
import { findVectorExtension, PostgresVectorTables } from './postgres-vector-tables.js';

// A few thousand messages, most of them one user's, so that the planner prefers the indexes to a scan of
// the user's rows: the statements checked here are the ones the store runs (the same builders).
const tenantId = 'tenant-idx';
const heavyUser = 'user-heavy';
const conversationsPerUser = 10;
const messagesPerConversation = 300;
const embedder = new HashedEmbedder({ dimensions: 64 });
const vocabulary =
  'relay ridge battery antenna solar node gateway hops signal storm valley summit cabin trail river bridge mesh packet channel firmware'.split(
    ' ',
  );

function messageText(index: number): string {
  const words = Array.from(
    { length: 8 },
    (_, offset) => vocabulary[(index * 7 + offset * 13 + (index % 5)) % vocabulary.length]!,
  );
  // A rare word in a handful of messages: what a recall query typically looks for.
  return index % 997 === 3 ? `${words.join(' ')} quartermaster ${index}` : `${words.join(' ')} ${index}`;
}

async function seed(store: PostgresStore, userId: string, conversations: number): Promise<void> {
  for (let conversation = 0; conversation < conversations; conversation += 1) {
    const scope: Scope = { tenantId, userId, conversationId: `conv-${conversation}` };
    const start = Date.UTC(2024, 0, 1) + conversation * 86_400_000;
    const messages = Array.from({ length: messagesPerConversation }, (_, index) =>
      makeNewMessage(messageText(conversation * messagesPerConversation + index), {
        createdAt: new Date(start + index * 60_000).toISOString(),
      }),
    );
    await store.appendMessages(scope, messages);
    const vectors = await embedder.embed(messages.map((message) => message.content));
    await store.upsertEmbeddings(
      scope,
      embedder.model,
      vectors.map((vector, index) => ({ seq: index + 1, vector })),
    );
  }
}

describeWithPostgres('PostgreSQL search indexes', (url) => {
  const schemas = createTestSchemas(url);
  const schema = schemas.fresh();
  const tables = postgresTables(schema);
  let store: PostgresStore;
  let vectorSchema: string | undefined;

  beforeAll(async () => {
    store = await createPostgresStore({ connectionString: url, schema, poolMax: 4 });
    await seed(store, heavyUser, conversationsPerUser);
    await seed(store, 'user-light', 1);
    // As autovacuum leaves a running database: statistics gathered, and the GIN index's pending list
    // (where fast updates park new entries, which every search must read in full) merged into the index.
    await schemas.pool.query(`VACUUM ANALYZE ${tables.messages}, ${tables.conversations}`);
    vectorSchema = await findVectorExtension(schemas.pool);
    if (vectorSchema !== undefined) await schemas.pool.query(`VACUUM ANALYZE ${tables.vectorTable(1)}`);
  }, 120_000);

  afterAll(async () => {
    await store?.close();
    await schemas.dropAll();
    await schemas.close();
  });

  const explain = async (text: string, parameters: unknown[], settings?: unknown[]): Promise<string> => {
    const client = await schemas.pool.connect();
    try {
      await client.query('BEGIN');
      if (settings !== undefined) await client.query(vectorSearchSettings, settings);
      const plan = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, parameters);
      return plan.rows.map((row) => row['QUERY PLAN']).join('\n');
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  };

  describe('keyword search', () => {
    it("finds the user's candidates through the GIN index messages_search", async () => {
      const words = keywordQueryWords(keywordTerms('who was the quartermaster?'));
      const statement = keywordSearchStatement(tables, { k: 50 })!;
      const plan = await explain(statement.text, [tenantId, heavyUser, words.join(' | '), words.join(' '), 50]);
      expect(plan).toContain('messages_search');
      expect(plan).not.toMatch(/Seq Scan on messages/);
    });

    it("ranks the messages holding the rare word first, and only the user's", async () => {
      const hits = await store.searchKeyword({ tenantId, userId: heavyUser }, keywordTerms('quartermaster relay'), {
        k: 10,
      });
      const rare = hits.filter((hit) => hit.message.content.includes('quartermaster'));
      expect(rare.length).toBeGreaterThanOrEqual(3);
      expect(hits.slice(0, rare.length).every((hit) => hit.message.content.includes('quartermaster'))).toBe(true);
      expect(
        await store.searchKeyword({ tenantId: 'tenant-other', userId: heavyUser }, ['quartermaster'], { k: 10 }),
      ).toEqual([]);
    });
  });

  describe('vector search', () => {
    it("orders the user's vectors with the HNSW index of the model's table", async (context) => {
      if (vectorSchema === undefined) {
        console.warn('[@mnemo/postgres] this server has no pgvector: the HNSW plan was not checked');
        context.skip();
      }
      const vectorTables = new PostgresVectorTables(schemas.pool, tables, vectorSchema!);
      const table = (await vectorTables.find(embedder.model, embedder.dimensions))!;
      expect(table.indexName).toBe('vectors_1_embedding');
      const [query] = await embedder.embed(['battery antenna on the ridge']);
      const statement = vectorSearchStatement(tables, table, vectorTables.names, { k: 50 })!;
      const plan = await explain(
        statement.text,
        [tenantId, heavyUser, toVectorLiteral(query!), 50],
        [String(hnswEfSearch(50))],
      );
      expect(plan).toContain('Index Scan using vectors_1_embedding');
    });

    it('returns k hits that pass a selective conversation and time filter, nearest first', async () => {
      const [query] = await embedder.embed([messageText(3 * messagesPerConversation + 142)]);
      const since = new Date(Date.UTC(2024, 0, 4) + 100 * 60_000).toISOString();
      const hits = await store.searchVector({ tenantId, userId: heavyUser }, embedder.model, query!, {
        k: 20,
        conversationIds: ['conv-3'],
        since,
      });
      expect(hits).toHaveLength(20);
      expect(hits.every((hit) => hit.conversationId === 'conv-3' && hit.message.createdAt >= since)).toBe(true);
      expect(hits[0]?.message.seq).toBe(143);
      expect(hits[0]!.score).toBeCloseTo(1, 5);
      expect(hits.every((hit, index) => index === 0 || hit.score <= hits[index - 1]!.score)).toBe(true);
    });

    it("finds a message by its own text among all of the user's vectors", async () => {
      const [query] = await embedder.embed([messageText(7 * messagesPerConversation + 211)]);
      const hits = await store.searchVector({ tenantId, userId: heavyUser }, embedder.model, query!, { k: 5 });
      expect(hits[0]).toMatchObject({ conversationId: 'conv-7', message: { seq: 212 } });
      const light = await store.searchVector({ tenantId, userId: 'user-light' }, embedder.model, query!, { k: 5 });
      expect(light.every((hit) => hit.conversationId === 'conv-0')).toBe(true);
    });
  });
});
