import { isMemoryError, MemoryError, type Scope } from '@mnemo/core';
import { makeNewMessage } from '@mnemo/core/testing';
import pg from 'pg';
import { afterAll, afterEach, expect, it } from 'vitest';
import { createTestSchemas, describeWithPostgres } from '../test/postgres-test-database.js';
import {
  migratePostgresSchema,
  postgresMigrations,
  readPostgresSchemaVersion,
  type PostgresMigration,
} from './postgres-migrations.js';
import { createPostgresStore } from './postgres-store.js';

const scope: Scope = { tenantId: 'tenant-a', userId: 'user-1', conversationId: 'conv-1' };
const latestVersion = postgresMigrations.length;
const allVersions = postgresMigrations.map((migration) => migration.version);

describeWithPostgres('migratePostgresSchema', (url) => {
  const schemas = createTestSchemas(url);
  const pools: pg.Pool[] = [];
  // A pool of its own per migrator, as separate replicas would have.
  const newPool = () => {
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    pools.push(pool);
    return pool;
  };
  afterEach(async () => {
    for (const pool of pools.splice(0)) await pool.end();
    await schemas.dropAll();
  });
  afterAll(() => schemas.close());

  it('creates the schema, records every step, and runs nothing again when re-run, keeping the data', async () => {
    const schema = schemas.fresh();
    const pool = newPool();
    expect(await readPostgresSchemaVersion(pool, schema)).toBe(0);
    expect(await migratePostgresSchema(pool, { schema })).toEqual({
      fromVersion: 0,
      toVersion: latestVersion,
      applied: allVersions,
    });
    const store = await createPostgresStore({ connectionString: url, schema });
    await store.appendMessages(scope, [makeNewMessage('before re-run')]);
    await store.close();
    expect(await migratePostgresSchema(pool, { schema })).toEqual({
      fromVersion: latestVersion,
      toVersion: latestVersion,
      applied: [],
    });
    const reopened = await createPostgresStore({ connectionString: url, schema });
    try {
      await reopened.appendMessages(scope, [makeNewMessage('after re-run')]);
      expect((await reopened.listMessages(scope)).map((message) => [message.seq, message.content])).toEqual([
        [1, 'before re-run'],
        [2, 'after re-run'],
      ]);
    } finally {
      await reopened.close();
    }
    const recorded = await pool.query<{ version: number }>(
      `SELECT version FROM "${schema}".mnemo_migrations ORDER BY version`,
    );
    expect(recorded.rows.map((row) => row.version)).toEqual(allVersions);
  });

  it('migrates exactly once when four replicas start together on an empty schema', async () => {
    const schema = schemas.fresh();
    const results = await Promise.all(Array.from({ length: 4 }, () => migratePostgresSchema(newPool(), { schema })));
    const applied = results.map((result) => result.applied);
    expect(applied.filter((steps) => steps.length > 0)).toEqual([allVersions]);
    expect(applied.filter((steps) => steps.length === 0)).toHaveLength(3);
    expect(results.every((result) => result.toVersion === latestVersion)).toBe(true);
    const recorded = await schemas.pool.query<{ steps: number }>(
      `SELECT count(*)::int AS steps FROM "${schema}".mnemo_migrations`,
    );
    expect(recorded.rows[0]?.steps).toBe(latestVersion);
  });

  it('applies only the steps newer than the recorded version when the code gains a migration', async () => {
    const schema = schemas.fresh();
    const pool = newPool();
    await migratePostgresSchema(pool, { schema });
    const probe: PostgresMigration = {
      version: latestVersion + 1,
      name: 'probe',
      sql: 'CREATE TABLE probe (n integer); INSERT INTO probe VALUES (1);',
    };
    expect(await migratePostgresSchema(pool, { schema, migrations: [...postgresMigrations, probe] })).toEqual({
      fromVersion: latestVersion,
      toVersion: latestVersion + 1,
      applied: [latestVersion + 1],
    });
    expect((await pool.query(`SELECT n FROM "${schema}".probe`)).rows).toEqual([{ n: 1 }]);
  });

  it('rolls back the whole step and keeps the old version when a migration fails halfway', async () => {
    const schema = schemas.fresh();
    const pool = newPool();
    await migratePostgresSchema(pool, { schema });
    const broken: PostgresMigration = {
      version: latestVersion + 1,
      name: 'broken',
      sql: 'CREATE TABLE half (n integer); INSERT INTO nowhere VALUES (1);',
    };
    const attempt = migratePostgresSchema(pool, { schema, migrations: [...postgresMigrations, broken] });
    await expect(attempt).rejects.toSatisfy(
      (error: unknown) => isMemoryError(error, 'storage_failed') && error.cause !== undefined,
    );
    expect(await readPostgresSchemaVersion(pool, schema)).toBe(latestVersion);
    expect(
      (await pool.query<{ found: string | null }>('SELECT to_regclass($1) AS found', [`"${schema}".half`])).rows[0]
        ?.found,
    ).toBeNull();
  });

  it('migrates a version 4 schema to conversation metadata, reading its old rows with metadata undefined', async () => {
    const schema = schemas.fresh();
    await migratePostgresSchema(newPool(), { schema, migrations: postgresMigrations.slice(0, 4) });
    const key = [scope.tenantId, scope.userId, scope.conversationId];
    await schemas.pool.query(
      `INSERT INTO "${schema}".conversations (tenant_id, user_id, conversation_id, created_at, updated_at, message_count, total_tokens) VALUES ($1, $2, $3, now(), now(), 2, 4)`,
      key,
    );
    await schemas.pool.query(
      `INSERT INTO "${schema}".messages (tenant_id, user_id, conversation_id, seq, id, role, content, created_at, tokens)
        VALUES ($1, $2, $3, 1, 'm1', 'user', 'hi', now(), 2), ($1, $2, $3, 2, 'm2', 'assistant', 'yo', now(), 2)`,
      key,
    );
    const store = await createPostgresStore({ connectionString: url, schema });
    try {
      expect(await readPostgresSchemaVersion(schemas.pool, schema)).toBe(latestVersion);
      expect(await store.getConversation(scope)).toMatchObject({
        messageCount: 2,
        totalTokens: 4,
        metadata: undefined,
      });
      expect(await store.countMessagesByRole(scope)).toEqual({ user: 1, assistant: 1 });
      expect(await store.updateConversationMetadata(scope, { memory_type: 'buffer' })).toMatchObject({
        messageCount: 2,
        metadata: { memory_type: 'buffer' },
      });
    } finally {
      await store.close();
    }
  });

  it('refuses a schema written by a newer version with a typed error and leaves it untouched', async () => {
    const schema = schemas.fresh();
    const store = await createPostgresStore({ connectionString: url, schema });
    await store.appendMessages(scope, [makeNewMessage('from the future')]);
    await store.close();
    await schemas.pool.query(
      `INSERT INTO "${schema}".mnemo_migrations (version, name) VALUES ($1, 'from a newer mnemo')`,
      [latestVersion + 7],
    );

    const error = await createPostgresStore({ connectionString: url, schema }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(MemoryError);
    expect(error).toMatchObject({
      code: 'storage_failed',
      details: { schema, schemaVersion: latestVersion + 7, supportedVersion: latestVersion },
    });
    expect((error as MemoryError).message).toMatch(/newer than version \d+.*upgrade mnemo/);
    expect(await readPostgresSchemaVersion(schemas.pool, schema)).toBe(latestVersion + 7);
    expect((await schemas.pool.query(`SELECT content FROM "${schema}".messages`)).rows).toEqual([
      { content: 'from the future' },
    ]);
  });

  it('creates the vector extension when the server has pgvector, and migrates without it otherwise', async (context) => {
    const available = await schemas.pool.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'");
    const schema = schemas.fresh();
    await migratePostgresSchema(newPool(), { schema });
    const installed = await schemas.pool.query("SELECT extversion FROM pg_extension WHERE extname = 'vector'");
    if (available.rowCount === 0) {
      console.warn('[@mnemo/postgres] this server has no pgvector: only the migration without it was checked');
      expect(installed.rowCount).toBe(0);
      context.skip();
    }
    expect(installed.rowCount).toBe(1);
  });
});
