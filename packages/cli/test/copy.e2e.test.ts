import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { HashedEmbedder, type NewMessage, type Store, type UserScope } from '@mnemo/core';
import { type StoreRecord } from '@mnemo/core/internals';
import { createPostgresStore } from '@mnemo/postgres';
import { createSqliteStore } from '@mnemo/sqlite';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parsePostgresDatabase } from '../src/store/open-cli-store.js';
import { describeWithPostgres, dropSchemas, freshSchemaUrl } from './postgres-database.js';
import { makeWorkDirectory, runMnemo } from './run-mnemo.js';

let work: { path: string; remove: () => Promise<void> };

beforeEach(async () => {
  work = await makeWorkDirectory();
});

afterEach(async () => {
  await work.remove();
});

const spawnHeavy = { timeout: 120_000 };
const users: readonly UserScope[] = [
  { tenantId: 'mesh', userId: 'maren' },
  { tenantId: 'mesh', userId: 'tomas' },
  { tenantId: 'ops', userId: 'default' },
];
const at = (minute: number) => new Date(Date.UTC(2024, 4, 1, 12, minute)).toISOString();

/** A stored-message input with the optional fields left out set to undefined, as the port's type wants them. */
function message(
  fields: Partial<NewMessage> & Pick<NewMessage, 'role' | 'content' | 'createdAt' | 'tokens'>,
): NewMessage {
  return {
    name: undefined,
    toolCalls: undefined,
    toolCallId: undefined,
    metadata: undefined,
    idempotencyKey: undefined,
    ...fields,
  };
}

/** A store holding one of everything the port can write, for two tenants. */
async function seed(store: Store): Promise<void> {
  for (const [index, user] of users.entries()) {
    for (const conversationId of ['node-7', 'node-9']) {
      const scope = { ...user, conversationId };
      const messages: Parameters<typeof message>[0][] = [
        {
          role: 'user',
          content: `Relay LARCH-RIDGE is up (${index})`,
          createdAt: at(1),
          tokens: 9,
          metadata: { node: '!a1b2', hops: 3 },
          idempotencyKey: `k-${conversationId}-1`,
        },
        {
          role: 'assistant',
          content: '',
          createdAt: at(2),
          tokens: 20,
          name: 'bot',
          toolCalls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }],
        },
        { role: 'tool', content: '{"temp":4}', toolCallId: 'call_1', createdAt: at(3), tokens: 7 },
        { role: 'user', content: 'Battery at 80 percent, café ☕ ünïcødé', createdAt: at(4), tokens: 11 },
      ];
      await store.appendMessages(
        scope,
        messages.map((fields) => message(fields)),
      );
      const first = await store.insertSummary(
        scope,
        {
          level: 0,
          fromSeq: 1,
          toSeq: 2,
          content: 'Relay up.',
          tokens: 4,
          foldedSummaryIds: [],
          summarizer: 'extractive@1',
          inputTokens: 50,
          outputTokens: 4,
          createdAt: at(5),
        },
        { expectedWatermark: 0 },
      );
      await store.insertSummary(
        scope,
        {
          level: 0,
          fromSeq: 1,
          toSeq: 3,
          content: 'Relay up; 4 °C.',
          tokens: 6,
          foldedSummaryIds: [first.id],
          summarizer: 'openai:m',
          inputTokens: 60,
          outputTokens: 6,
          fallbackReason: 'timeout',
          createdAt: at(6),
        },
        { expectedWatermark: 2 },
      );
      await store.insertUsage(scope, {
        kind: 'context',
        policy: 'hybrid',
        sentTokens: 30,
        fullHistoryTokens: 47,
        createdAt: at(7),
      });
      await store.advanceCursor(scope, 'knowledge:heuristic@1', 0, 4);
      // One conversation with metadata, one without: both must arrive as they were.
      if (conversationId === 'node-7')
        await store.updateConversationMetadata(scope, {
          memory_type: 'summary',
          node: { id: '!a1b2', hops: 3 },
          note: 'café ☕',
        });
    }
    const home = await store.insertFact(user, {
      subject: 'user',
      attribute: 'home_town',
      value: 'Hood River',
      text: 'I live in Hood River',
      confidence: 0.9,
      validFrom: at(1),
      sourceConversationId: 'node-7',
      sourceSeqs: [1],
      extractor: 'heuristic@1',
      createdAt: at(1),
    });
    await store.insertFact(
      user,
      {
        subject: 'user',
        attribute: 'home_town',
        value: 'Bend',
        text: 'We moved to Bend',
        confidence: 0.8,
        validFrom: at(4),
        sourceSeqs: [4],
        extractor: 'api',
        createdAt: at(4),
      },
      { supersedes: home.id },
    );
    const likes = await store.insertFact(user, {
      subject: 'user',
      attribute: 'likes',
      value: 'coffee',
      text: 'I like coffee',
      confidence: 0.7,
      validFrom: at(2),
      sourceSeqs: [2],
      extractor: 'heuristic@1',
      createdAt: at(2),
    });
    await store.retireFact(user, likes.id, at(5));
    const maren = await store.upsertEntity(
      user,
      { name: 'Maren', type: 'person', aliases: ['M'], description: 'neighbour' },
      at(1),
    );
    const relay = await store.upsertEntity(user, { name: 'LARCH-RIDGE', type: 'relay' }, at(1));
    const uses = await store.insertRelation(
      user,
      { subjectId: maren.id, predicate: 'uses_relay', objectId: relay.id, validFrom: at(1), sourceSeqs: [1] },
      at(1),
    );
    await store.retireRelation(user, uses.id, at(3));
    await store.insertRelation(
      user,
      {
        subjectId: maren.id,
        predicate: 'knows',
        objectId: relay.id,
        validFrom: at(2),
        sourceConversationId: 'node-9',
        sourceSeqs: [2],
      },
      at(2),
    );
    await store.putMemoryFile(user, { path: '/memories/notes.md', content: 'first', now: at(1) });
    await store.putMemoryFile(user, { path: '/memories/notes.md', content: 'second', now: at(2), expectedVersion: 1 });
    await store.putMemoryFile(user, { path: '/memories/trips/june.md', content: 'Bend → Hood River', now: at(3) });
  }
}

/** Everything the port reads back, per user and conversation: what a copy must keep exactly. */
async function dump(store: Store): Promise<unknown> {
  const result: Record<string, unknown> = {};
  for (const user of users) {
    const conversations = (await store.listConversations(user)).items;
    const perConversation: Record<string, unknown> = {};
    for (const conversation of conversations) {
      perConversation[conversation.conversationId] = {
        conversation,
        messages: await store.listMessages(conversation),
        summaries: await store.listSummaries(conversation),
        usage: await store.getUsageTotals(conversation),
        // The ledger entry by entry, in the order written (positions are the target's own).
        ledger: (await store.listUsage(conversation)).items.map(({ position: _position, ...entry }) => entry),
        latestSummary: await store.getLatestSummary(conversation),
        roles: await store.countMessagesByRole(conversation),
        cursor: await store.getCursor(conversation, 'knowledge:heuristic@1'),
      };
    }
    const entities = await store.listEntities(user);
    const files = await store.listMemoryFiles(user, '/memories');
    result[`${user.tenantId}/${user.userId}`] = {
      conversations: perConversation,
      facts: await store.listFacts(user, { includeHistory: true }),
      entities,
      relations: await store.listRelations(user, {
        entityIds: entities.map((entity) => entity.id),
        includeHistory: true,
      }),
      files: await Promise.all(files.map((file) => store.getMemoryFile(user, file.path))),
      // The entity name index: every name and alias still finds its entity.
      lookups: await Promise.all(
        ['maren', 'm', 'larch-ridge'].map(async (name) =>
          (await store.listEntities(user, { query: name })).map((entity) => entity.id),
        ),
      ),
      // Keyword search finds the same messages in the copy (FTS rows, tsvectors and BM25 statistics are rebuilt by
      // the target); the order of equal-time ties is each store's own, so they are compared as a set.
      keyword: (await store.searchKeyword(user, ['battery', 'relay'], { k: 10 }))
        .map((hit) => `${hit.conversationId}#${hit.message.seq}`)
        .sort(),
    };
  }
  return result;
}

async function sqliteDump(path: string): Promise<unknown> {
  const store = createSqliteStore({ path, readonly: true });
  try {
    return await dump(store);
  } finally {
    await store.close();
  }
}

async function seedSqlite(path: string): Promise<unknown> {
  const store = createSqliteStore({ path });
  try {
    await seed(store);
  } finally {
    await store.close();
  }
  return sqliteDump(path);
}

/** Every record of a SQLite store's export, in order: the rows themselves, not only what the port's reads show. */
async function sqliteRecords(path: string): Promise<StoreRecord[]> {
  const store = createSqliteStore({ path, readonly: true });
  const records: StoreRecord[] = [];
  try {
    for await (const page of store.exportRecords()) records.push(...page);
  } finally {
    await store.close();
  }
  return records;
}

/** The report's tables for the seeded store: every table copied, source and target equal. */
const seededTables = [
  ['conversations', 6],
  ['messages', 24],
  ['usage', 18],
  ['summaries', 12],
  ['cursors', 6],
  ['facts', 9],
  ['entities', 6],
  ['entity_names', 9],
  ['relations', 6],
  ['memory_files', 6],
].map(([table, count]) => ({ table, source: count, target: count }));

interface CopyJson {
  replaced: boolean;
  tables: { table: string; source: number; target: number }[];
  embedded?: { model: string; messages: number };
}

describe('mnemo copy between SQLite files', () => {
  it(
    'copies every tenant exactly, embeds the messages on the target, and refuses a non-empty target without --force',
    spawnHeavy,
    async () => {
      const source = join(work.path, 'source.db');
      const expected = await seedSqlite(source);
      expect(expected).toMatchObject({
        'mesh/maren': {
          facts: [{ value: 'Hood River', validTo: at(4) }, { value: 'Bend' }, { value: 'coffee', validTo: at(5) }],
          relations: [{ predicate: 'uses_relay', validTo: at(3) }, { predicate: 'knows' }],
          files: [
            { path: '/memories/notes.md', version: 2 },
            { path: '/memories/trips/june.md', version: 1 },
          ],
          conversations: {
            'node-7': {
              conversation: { summarizedThroughSeq: 3, metadata: { memory_type: 'summary' } },
              summaries: [{ toSeq: 2 }, { toSeq: 3 }],
              usage: { requests: 1, compactions: 2 },
            },
          },
        },
      });
      const env = { MNEMO_EMBEDDER: 'hashed' };
      const copied = await runMnemo(['copy', '--from', 'source.db', '--to', 'copy.db', '--json'], {
        cwd: work.path,
        env,
      });
      expect(copied.stderr).toBe('');
      expect(copied.code).toBe(0);
      const report = JSON.parse(copied.stdout) as CopyJson;
      expect(report.tables).toEqual(seededTables);
      expect(report.embedded).toEqual({ model: 'hashed-bow-256', messages: 24 });
      expect(await sqliteDump(join(work.path, 'copy.db'))).toEqual(expected);
      expect(await sqliteRecords(join(work.path, 'copy.db'))).toEqual(await sqliteRecords(source));

      const refused = await runMnemo(['copy', '--from', 'source.db', '--to', 'copy.db'], { cwd: work.path, env });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/already holds \d+ rows; pass --force/);

      // A target with rows and vectors of its own: --force replaces all of it.
      const other = createSqliteStore({ path: join(work.path, 'other.db') });
      await other.appendMessages({ tenantId: 'stale', userId: 'u', conversationId: 'c' }, [
        message({ role: 'user', content: 'stale', createdAt: at(9), tokens: 1 }),
      ]);
      const [vector] = await new HashedEmbedder({ dimensions: 8 }).embed(['stale']);
      await other.upsertEmbeddings({ tenantId: 'stale', userId: 'u', conversationId: 'c' }, 'old-model', [
        { seq: 1, vector: vector! },
      ]);
      await other.close();
      const forced = await runMnemo(['copy', '--from', 'source.db', '--to', 'other.db', '--force', '--no-embed'], {
        cwd: work.path,
        env,
      });
      expect(forced.code).toBe(0);
      expect(forced.stdout).toMatch(/previous contents replaced/);
      expect(forced.stdout).toMatch(/vectors not copied/);
      expect(await sqliteDump(join(work.path, 'other.db'))).toEqual(expected);
      const check = createSqliteStore({ path: join(work.path, 'other.db'), readonly: true });
      expect((await check.listConversations({ tenantId: 'stale' })).items).toEqual([]);
      await check.close();
    },
  );

  it('refuses the same database twice and a missing source', async () => {
    expect((await runMnemo(['copy', '--from', 'a.db', '--to', 'a.db'], { cwd: work.path })).code).toBe(2);
    const missing = await runMnemo(['copy', '--from', 'missing.db', '--to', 'b.db'], {
      cwd: work.path,
      env: { MNEMO_EMBEDDER: 'none' },
    });
    expect(missing.code).toBe(2);
    expect(existsSync(join(work.path, 'b.db'))).toBe(false);
  });
});

describeWithPostgres('mnemo copy between SQLite and PostgreSQL', (url) => {
  const schemas: string[] = [];
  afterAll(() => dropSchemas(url, schemas));

  it('moves a store to PostgreSQL and back with every row, id and history intact', spawnHeavy, async () => {
    const source = join(work.path, 'source.db');
    const expected = await seedSqlite(source);
    const target = freshSchemaUrl(url);
    schemas.push(target.schema);
    const env = { MNEMO_EMBEDDER: 'hashed' };

    const up = await runMnemo(['copy', '--from', 'source.db', '--to', target.url, '--json'], {
      cwd: work.path,
      env,
      timeoutMs: 60_000,
    });
    expect(up.stderr).toBe('');
    expect(up.code).toBe(0);
    expect(JSON.parse(up.stdout) as CopyJson).toMatchObject({
      replaced: false,
      tables: seededTables,
      embedded: { model: 'hashed-bow-256', messages: 24 },
    });
    const { connectionString, schema } = parsePostgresDatabase(target.url);
    const postgres = await createPostgresStore({
      connectionString,
      ...(schema === undefined ? {} : { schema }),
      readonly: true,
    });
    try {
      expect(await dump(postgres)).toEqual(expected);
      expect(
        await postgres.listUnembeddedMessages({ ...users[0]!, conversationId: 'node-7' }, 'hashed-bow-256', 10),
      ).toEqual([]);
      // Keyword search works on the copied rows (its tsvectors and BM25 statistics are rebuilt by the target).
      const hits = await postgres.searchKeyword(users[0]!, ['battery'], { k: 5 });
      expect(hits.map((hit) => hit.message.seq)).toEqual([4, 4]);
    } finally {
      await postgres.close();
    }

    // A PostgreSQL target that holds rows is refused without --force, in the import's transaction, and replaced whole with it.
    const refused = await runMnemo(['copy', '--from', 'source.db', '--to', target.url, '--no-embed'], {
      cwd: work.path,
      env,
      timeoutMs: 60_000,
    });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/already holds 102 rows; pass --force/);
    const forced = await runMnemo(
      ['copy', '--from', 'source.db', '--to', target.url, '--force', '--no-embed', '--json'],
      {
        cwd: work.path,
        env,
        timeoutMs: 60_000,
      },
    );
    expect(forced.code).toBe(0);
    expect(JSON.parse(forced.stdout) as CopyJson).toMatchObject({ replaced: true, tables: seededTables });

    const down = await runMnemo(['copy', '--from', target.url, '--to', 'back.db', '--no-embed', '--json'], {
      cwd: work.path,
      env,
      timeoutMs: 60_000,
    });
    expect(down.code).toBe(0);
    expect((JSON.parse(down.stdout) as CopyJson).tables).toEqual(seededTables);
    expect(await sqliteDump(join(work.path, 'back.db'))).toEqual(expected);
    // Through PostgreSQL and back, every row of every kind is what it was (ids, seqs, times, JSON, links, entity names).
    expect(await sqliteRecords(join(work.path, 'back.db'))).toEqual(await sqliteRecords(source));
  });
});
