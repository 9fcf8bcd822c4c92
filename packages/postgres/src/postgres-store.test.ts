import { HashedEmbedder, isMemoryError, type Scope } from '@mnemo/core';
import { readJobBacklog } from '@mnemo/core/internals';
import { makeNewMessage, runStoreConformance } from '@mnemo/core/testing';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createTestSchemas, describeWithPostgres } from '../test/postgres-test-database.js';
import { createPostgresStore, type PostgresStore } from './postgres-store.js';

const scope: Scope = { tenantId: 'tenant-a', userId: 'user-1', conversationId: 'conv-1' };

describeWithPostgres('PostgresStore on a real PostgreSQL', (url) => {
  const schemas = createTestSchemas(url);
  afterAll(() => schemas.close());

  // Every store gets a schema of its own, dropped after its test: tests never see each other's rows.
  runStoreConformance({
    name: 'PostgresStore',
    createStore: () => createPostgresStore({ connectionString: url, schema: schemas.fresh(), poolMax: 4 }),
    cleanup: () => schemas.dropAll(),
  });

  // Servers without pgvector keep vectors as real[] rows; the same suite holds them to the port.
  runStoreConformance({
    name: 'PostgresStore with real[] vectors',
    createStore: () =>
      createPostgresStore({ connectionString: url, schema: schemas.fresh(), poolMax: 4, pgvector: false }),
    cleanup: () => schemas.dropAll(),
  });

  describe('PostgresStore', () => {
    const opened: PostgresStore[] = [];
    const open = async (
      options: { statementTimeoutMs?: number; schema?: string; pgvector?: boolean; readonly?: boolean } = {},
    ) => {
      const store = await createPostgresStore({
        connectionString: url,
        schema: options.schema ?? schemas.fresh(),
        poolMax: 4,
        ...options,
      });
      opened.push(store);
      return store;
    };
    afterEach(async () => {
      for (const store of opened.splice(0)) await store.close();
      await schemas.dropAll();
    });

    it('does nothing and fails with unavailable when the signal is already aborted', async () => {
      const store = await open();
      const controller = new AbortController();
      controller.abort();
      const attempt = store.appendMessages(scope, [makeNewMessage('late')], { signal: controller.signal });
      await expect(attempt).rejects.toSatisfy((error: unknown) => isMemoryError(error, 'unavailable'));
      expect(await store.listMessages(scope)).toEqual([]);
    });

    it('refuses text with a NUL character as invalid_input and stores nothing of the batch', async () => {
      const store = await open();
      const attempt = store.appendMessages(scope, [makeNewMessage('fine'), makeNewMessage('nul \u0000 inside')]);
      await expect(attempt).rejects.toSatisfy(
        (error: unknown) => isMemoryError(error, 'invalid_input') && error.cause !== undefined,
      );
      expect(await store.getConversation(scope)).toBeUndefined();
    });

    it('refuses a non-canonical createdAt with invalid_input rather than storing an altered time', async () => {
      const store = await open();
      const attempt = store.appendMessages(scope, [
        makeNewMessage('ok'),
        makeNewMessage('bad', { createdAt: '2024-05-01T12:00:00+02:00' }),
      ]);
      await expect(attempt).rejects.toSatisfy((error: unknown) => isMemoryError(error, 'invalid_input'));
      expect(await store.listMessages(scope)).toEqual([]);
    });

    it('fails with retryable unavailable and stores nothing when another connection holds the conversation past the statement timeout', async () => {
      const schema = schemas.fresh();
      const store = await open({ schema, statementTimeoutMs: 300 });
      await store.appendMessages(scope, [makeNewMessage('first')]);
      const blocker = await schemas.pool.connect();
      try {
        await blocker.query('BEGIN');
        await blocker.query(`SELECT 1 FROM "${schema}".conversations WHERE conversation_id = $1 FOR UPDATE`, [
          scope.conversationId,
        ]);
        const attempt = store.appendMessages(scope, [makeNewMessage('blocked')]);
        await expect(attempt).rejects.toSatisfy(
          (error: unknown) =>
            isMemoryError(error, 'unavailable') && error.details?.['sqlState'] === '57014' && error.cause !== undefined,
        );
      } finally {
        await blocker.query('ROLLBACK');
        blocker.release();
      }
      expect((await store.listMessages(scope)).map((message) => message.content)).toEqual(['first']);
    });

    it('keeps gapless seqs when two stores (two pools) append to one conversation at once', async () => {
      const schema = schemas.fresh();
      const [left, right] = [await open({ schema }), await open({ schema })];
      await Promise.all(
        [left, right].flatMap((store, side) =>
          Array.from({ length: 4 }, (_, writer) =>
            (async () => {
              for (let index = 0; index < 10; index += 1) {
                await store.appendMessages(scope, [
                  makeNewMessage(`s${side}-w${writer}-${index}`, { idempotencyKey: `s${side}-w${writer}-${index}` }),
                ]);
              }
            })(),
          ),
        ),
      );
      const stored = await left.listMessages(scope);
      expect(stored.map((message) => message.seq)).toEqual(Array.from({ length: 80 }, (_, index) => index + 1));
      expect(new Set(stored.map((message) => message.content)).size).toBe(80);
      expect(await right.getConversation(scope)).toMatchObject({ messageCount: 80 });
    });

    it('leases each job to exactly one of two stores polling at once', async () => {
      const schema = schemas.fresh();
      const [left, right] = [await open({ schema }), await open({ schema })];
      const jobCount = 30;
      for (let index = 0; index < jobCount; index += 1) {
        await left.enqueueJob(
          { ...scope, conversationId: `c${index}` },
          { kind: 'compact', runAt: new Date(0).toISOString(), maxAttempts: 3 },
        );
      }
      const drain = async (store: PostgresStore, workerId: string) => {
        const leased: string[] = [];
        for (;;) {
          const job = await store.leaseJob({ workerId, leaseMs: 60_000, now: new Date().toISOString() });
          if (job === undefined) return leased;
          leased.push(job.id);
          await store.completeJob(job, new Date().toISOString());
        }
      };
      const results = await Promise.all([drain(left, 'a1'), drain(left, 'a2'), drain(right, 'b1'), drain(right, 'b2')]);
      const all = results.flat();
      expect(all).toHaveLength(jobCount);
      expect(new Set(all).size).toBe(jobCount);
      expect((await readJobBacklog(right, {})).byStatus).toEqual({ pending: 0, running: 0, done: jobCount, failed: 0 });
    });

    it('registers a new embedding model once when two stores store its first vectors at the same time', async () => {
      const schema = schemas.fresh();
      const [left, right] = [await open({ schema }), await open({ schema })];
      const embedder = new HashedEmbedder({ dimensions: 16 });
      const scopes = Array.from({ length: 8 }, (_, index) => ({ ...scope, conversationId: `race-${index}` }));
      for (const each of scopes)
        await left.appendMessages(each, [makeNewMessage(`battery report ${each.conversationId}`)]);
      const [vector] = await embedder.embed(['battery report']);
      await Promise.all(
        scopes.map((each, index) =>
          (index % 2 === 0 ? left : right).upsertEmbeddings(each, embedder.model, [{ seq: 1, vector: vector! }]),
        ),
      );
      for (const each of scopes) expect(await right.listUnembeddedMessages(each, embedder.model, 10)).toEqual([]);
    });

    it('moves real[] vectors into a pgvector table when opened on a server that has the extension', async (context) => {
      const installed = await schemas.pool.query("SELECT 1 FROM pg_extension WHERE extname = 'vector'");
      if (installed.rowCount === 0) context.skip();
      const schema = schemas.fresh();
      const embedder = new HashedEmbedder({ dimensions: 32 });
      const before = await open({ schema, pgvector: false });
      const contents = ['solar panel on the ridge', 'battery at 80 percent', 'the relay rebooted'];
      await before.appendMessages(
        scope,
        contents.map((content) => makeNewMessage(content)),
      );
      const vectors = await embedder.embed(contents);
      await before.upsertEmbeddings(
        scope,
        embedder.model,
        vectors.map((vector, index) => ({ seq: index + 1, vector })),
      );
      await before.close();

      const after = await open({ schema });
      expect(
        (await schemas.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".message_vectors`)).rows[0]
          ?.n,
      ).toBe(0);
      expect(
        (await schemas.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".vectors_1`)).rows[0]?.n,
      ).toBe(3);
      expect(await after.listUnembeddedMessages(scope, embedder.model, 10)).toEqual([]);
      const [query] = await embedder.embed(['battery percent']);
      const hits = await after.searchVector(
        { tenantId: scope.tenantId, userId: scope.userId },
        embedder.model,
        query!,
        { k: 3 },
      );
      expect(hits.map((hit) => hit.message.seq)[0]).toBe(2);
      expect(hits).toHaveLength(3);
    });

    it('opens an existing schema read-only: reads work, writes fail, and a schema without a store is not_found', async () => {
      const schema = schemas.fresh();
      const writer = await open({ schema });
      await writer.appendMessages(scope, [makeNewMessage('kept')]);
      const reader = await open({ schema, readonly: true });
      expect((await reader.listMessages(scope)).map((message) => message.content)).toEqual(['kept']);
      await expect(reader.appendMessages(scope, [makeNewMessage('refused')])).rejects.toSatisfy((error: unknown) =>
        isMemoryError(error, 'storage_failed'),
      );
      const missing = createPostgresStore({ connectionString: url, schema: schemas.fresh(), readonly: true });
      await expect(missing).rejects.toSatisfy((error: unknown) => isMemoryError(error, 'not_found'));
      expect((await writer.listMessages(scope)).map((message) => message.content)).toEqual(['kept']);
    });

    it('ignores a second close and refuses calls after it', async () => {
      const store = await createPostgresStore({ connectionString: url, schema: schemas.fresh() });
      await store.close();
      await expect(store.close()).resolves.toBeUndefined();
      await expect(store.getConversation(scope)).rejects.toSatisfy((error: unknown) =>
        isMemoryError(error, 'unavailable'),
      );
    });
  });
});

describe('createPostgresStore', () => {
  it('refuses bad options with invalid_input before connecting', async () => {
    const url = 'postgres://nobody@127.0.0.1:1/none';
    for (const options of [
      { connectionString: '' },
      { connectionString: url, schema: 'Bad-Name' },
      { connectionString: url, schema: 'pg_catalog' },
      { connectionString: url, poolMax: 0 },
      { connectionString: url, statementTimeoutMs: -1 },
    ]) {
      await expect(createPostgresStore(options)).rejects.toSatisfy((error: unknown) =>
        isMemoryError(error, 'invalid_input'),
      );
    }
  });

  it('fails with retryable unavailable, wrapping the driver error, when no server listens', async () => {
    const attempt = createPostgresStore({
      connectionString: 'postgres://nobody:secret@127.0.0.1:1/none',
      connectionTimeoutMs: 2000,
    });
    await expect(attempt).rejects.toSatisfy(
      (error: unknown) =>
        isMemoryError(error, 'unavailable') && error.cause !== undefined && !error.message.includes('secret'),
    );
  });
});
