import { type Scope, type UserScope } from '@mnemo/core';
import { keywordTerms } from '@mnemo/core/internals';
import type { SearchHit } from '@mnemo/core/store-kit';
import { makeNewMessage } from '@mnemo/core/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestSchemas, describeWithPostgres } from '../test/postgres-test-database.js';
import { PostgresKeywordIndex, tsvectorLexemes } from './postgres-keyword-index.js';
import { searchKeywordIndexed } from './postgres-keyword-search.js';
import { createPostgresStore, type PostgresStore } from './postgres-store.js';
import { postgresTables } from './postgres-tables.js';

// Words of uneven frequency (a few in most messages, many in few), English inflections for the stemmer,
// and a number per message that only it holds.
const vocabulary = [
  'relays',
  'relay',
  'ridge',
  'battery',
  'batteries',
  'running',
  'runs',
  'antenna',
  'summit',
  'storm',
  'solar',
  'panels',
  'camp',
  'lake',
  'packet',
  'mesh',
];
function messageText(index: number): string {
  const words: string[] = [];
  for (let position = 0; position < 2 + (index % 7); position += 1) {
    const draw = ((index * 7919 + position * 104_729) % 10_007) / 10_007;
    words.push(vocabulary[Math.floor(vocabulary.length * draw ** 2)]!);
  }
  return `${words.join(' ')} n${index}`;
}

const tenantId = 'tenant-words';

describeWithPostgres('PostgreSQL keyword index in memory', (url) => {
  const schemas = createTestSchemas(url);
  const schema = schemas.fresh();
  const tables = postgresTables(schema);
  const user = { tenantId, userId: 'user-large' };
  const small = { tenantId, userId: 'user-small' };
  let store: PostgresStore;

  async function seed(target: PostgresStore, scope: Scope, from: number, count: number): Promise<void> {
    const start = Date.UTC(2024, 0, 1) + from * 60_000;
    await target.appendMessages(
      scope,
      Array.from({ length: count }, (_, index) =>
        makeNewMessage(messageText(from + index), { createdAt: new Date(start + index * 60_000).toISOString() }),
      ),
    );
  }

  const identity = (hit: SearchHit) => `${hit.conversationId}#${hit.message.seq}#${hit.score}`;

  beforeAll(async () => {
    store = await createPostgresStore({ connectionString: url, schema, poolMax: 4 });
    // 4,500 messages: more than a search reads itself, so the copy is loaded in the background.
    for (let conversation = 0; conversation < 3; conversation += 1)
      await seed(store, { ...user, conversationId: `conv-${conversation}` }, conversation * 1500, 1500);
    await seed(store, { ...small, conversationId: 'conv-0' }, 0, 300);
  }, 120_000);

  afterAll(async () => {
    await store?.close();
    await schemas.dropAll();
    await schemas.close();
  });

  it("reads a tsvector's text form as unnest() does, quotes, backslashes and weights included", async () => {
    const texts = [
      "O'Brien's relay isn't up",
      'path C:\\radio\\logs and a \\ slash',
      "quote '' twice, it''s",
      'relay relay relay ridge',
      '',
      "\\'odd\\''",
    ];
    for (const text of texts) {
      for (const vector of [`to_tsvector('english', $1)`, `setweight(to_tsvector('english', $1), 'A')`]) {
        const { rows } = await schemas.pool.query<{ text: string; expected: Record<string, number> }>(
          `SELECT ${vector}::text AS text, coalesce((SELECT json_object_agg(v.lexeme, greatest(cardinality(v.positions), 1)) FROM unnest(${vector}) AS v), '{}') AS expected`,
          [text],
        );
        expect(Object.fromEntries(tsvectorLexemes(rows[0]!.text)), rows[0]!.text).toEqual(rows[0]!.expected);
      }
    }
    // A lexeme holding a quote and a backslash, as a tsvector literal can.
    const { rows } = await schemas.pool.query<{ text: string }>(`SELECT $1::tsvector::text AS text`, [
      "'a''b\\\\c':1,2,3 'x'",
    ]);
    expect(Object.fromEntries(tsvectorLexemes(rows[0]!.text))).toEqual({ "a'b\\c": 3, x: 1 });
  });

  it("leaves a large user's first search to SQL while it loads, then ranks from memory with the statements' hits and scores", async () => {
    const index = new PostgresKeywordIndex(schemas.pool, tables);
    try {
      expect(await index.search(user, 'relay', 10)).toBeUndefined();
      await index.warm(user);
      expect(index.bytes).toBeGreaterThan(0);
      let compared = 0;
      for (let query = 0; query < 30; query += 1) {
        const text =
          messageText(query * 131 + 7)
            .split(' ')
            .slice(0, 1 + (query % 5))
            .join(' ') + (query % 3 === 0 ? ` n${query * 97}` : '');
        for (const k of [1, 10, 100]) {
          const fromMemory = await index.search(user, text, k);
          const fromSql = await searchKeywordIndexed(schemas.pool, tables, user, keywordTerms(text), { k });
          expect(fromMemory?.map(identity), text).toEqual(fromSql.map(identity));
          compared += fromSql.length;
        }
      }
      expect(compared).toBeGreaterThan(1000);
      // The small user's copy is read within the search itself.
      const hits = await index.search(small, 'n250', 5);
      expect(hits?.map((hit) => hit.message.content)).toEqual([messageText(250)]);
    } finally {
      await index.close();
    }
  });

  it("sees another replica's appends, a conversation deleted and created again, and an erased user, and shows no one else's messages", async () => {
    const scratch = schemas.fresh();
    const writer = await createPostgresStore({ connectionString: url, schema: scratch, poolMax: 2 });
    const index = new PostgresKeywordIndex(schemas.pool, postgresTables(scratch));
    const someone: UserScope = { tenantId, userId: 'user-a' };
    const contents = async (who: UserScope, query: string) =>
      (await index.search(who, query, 10))?.map((hit) => hit.message.content);
    try {
      const scope = { ...someone, conversationId: 'conv-a' };
      await writer.appendMessages(scope, [makeNewMessage('the relay on the ridge'), makeNewMessage('battery is low')]);
      await writer.appendMessages({ ...scope, userId: 'user-b' }, [makeNewMessage('my relay broke, relay relay')]);
      expect(await contents(someone, 'relays')).toEqual(['the relay on the ridge']);
      await writer.appendMessages({ ...scope, conversationId: 'conv-b' }, [makeNewMessage('a new relay mast')]);
      // Shorter messages score higher: two lexemes against three.
      expect(await contents(someone, 'relay')).toEqual(['the relay on the ridge', 'a new relay mast']);
      await writer.deleteConversation(scope);
      await writer.appendMessages(scope, [
        makeNewMessage('relay again after the delete'),
        makeNewMessage('and the battery'),
        makeNewMessage('more'),
      ]);
      expect(await contents(someone, 'relay')).toEqual(['relay again after the delete', 'a new relay mast']);
      await writer.deleteUser(someone);
      expect(await contents(someone, 'relay')).toEqual([]);
      await writer.appendMessages(scope, [makeNewMessage('a fresh relay story')]);
      expect(await contents(someone, 'relay')).toEqual(['a fresh relay story']);
      expect(await contents({ ...someone, userId: 'user-b' }, 'relay')).toEqual(['my relay broke, relay relay']);
      expect(await contents({ tenantId: 'tenant-none', userId: 'user-a' }, 'relay')).toEqual([]);
    } finally {
      await index.close();
      await writer.close();
    }
  });

  it('reads a user afresh after single messages are erased, gaps at the tail included, and ranks as SQL does after', async () => {
    const scratch = schemas.fresh();
    const writer = await createPostgresStore({ connectionString: url, schema: scratch, poolMax: 2 });
    const index = new PostgresKeywordIndex(schemas.pool, postgresTables(scratch));
    const someone: UserScope = { tenantId, userId: 'user-gaps' };
    const scope = { ...someone, conversationId: 'conv-a' };
    const contents = async (query: string) =>
      (await index.search(someone, query, 10))?.map((hit) => hit.message.content);
    try {
      await writer.appendMessages(
        scope,
        ['relay one', 'relay zorblax two', 'relay three', 'relay four zorblax'].map((text) => makeNewMessage(text)),
      );
      expect(await contents('zorblax')).toEqual(['relay four zorblax', 'relay zorblax two']);
      await writer.eraseMessages(
        someone,
        { conversationId: scope.conversationId, fromSeq: 2, toSeq: 2 },
        { now: new Date().toISOString() },
      );
      expect(await contents('zorblax')).toEqual(['relay four zorblax']);
      await writer.eraseMessages(
        someone,
        { conversationId: scope.conversationId, fromSeq: 4, toSeq: 4 },
        { now: new Date().toISOString() },
      );
      expect(await contents('zorblax')).toEqual([]);
      await writer.appendMessages(scope, [makeNewMessage('relay five zorblax')]);
      expect(await contents('zorblax')).toEqual(['relay five zorblax']);
      const fromSql = await searchKeywordIndexed(
        schemas.pool,
        postgresTables(scratch),
        someone,
        keywordTerms('relay'),
        { k: 10 },
      );
      expect((await index.search(someone, 'relay', 10))?.map(identity)).toEqual(fromSql.map(identity));
    } finally {
      await index.close();
      await writer.close();
    }
  });

  it('waits for a background load when it is closed, and starts none after', async () => {
    const loading = new PostgresKeywordIndex(schemas.pool, tables);
    expect(await loading.search(user, 'ridge', 5)).toBeUndefined();
    await loading.close();
    const closed = new PostgresKeywordIndex(schemas.pool, tables);
    await closed.close();
    expect(await closed.search(user, 'ridge', 5)).toBeUndefined();
    expect(await closed.search(user, 'ridge', 5)).toBeUndefined();
    expect(closed.bytes).toBe(0);
  });

  it("answers the store's keyword searches with the same hits before and after the copy is loaded", async () => {
    const before = await store.searchKeyword(user, ['summit', 'storm', 'n1234'], { k: 20 });
    await store.warmKeywordIndex(user);
    expect((await store.searchKeyword(user, ['summit', 'storm', 'n1234'], { k: 20 })).map(identity)).toEqual(
      before.map(identity),
    );
  });
});
