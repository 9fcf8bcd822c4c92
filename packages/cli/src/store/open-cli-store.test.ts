import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMemoryError } from '@mnemo/core';
import { makeNewMessage } from '@mnemo/core/testing';
import { PostgresStore } from '@mnemo/postgres';
import { SqliteStore } from '@mnemo/sqlite';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeWithPostgres, dropSchemas, freshSchemaUrl } from '../../test/postgres-database.js';
import { describeDatabase, openCliStore, openStoreWhenAvailable, parsePostgresDatabase } from './open-cli-store.js';

const scope = { tenantId: 'default', userId: 'default', conversationId: 'node-7' };
let directory: string;

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'mnemo-open-store-'));
});

afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe('parsePostgresDatabase', () => {
  it("takes mnemo's schema parameter out of the URL and leaves every other parameter to pg", () => {
    expect(parsePostgresDatabase('postgres://u:p@db:5432/mnemo?schema=bot_a&sslmode=require')).toEqual({
      connectionString: 'postgres://u:p@db:5432/mnemo?sslmode=require',
      schema: 'bot_a',
    });
    expect(parsePostgresDatabase('postgresql://u@db/mnemo')).toEqual({ connectionString: 'postgresql://u@db/mnemo' });
  });
});

describe('describeDatabase', () => {
  it('masks the password of a URL and leaves SQLite paths alone', () => {
    expect(describeDatabase('postgres://mnemo:s3cret@db.internal:5432/mnemo?schema=x')).toBe(
      'postgres://mnemo:***@db.internal:5432/mnemo?schema=x',
    );
    expect(describeDatabase('postgres://mnemo@db/mnemo')).toBe('postgres://mnemo@db/mnemo');
    expect(describeDatabase('/var/lib/mnemo/bot.db')).toBe('/var/lib/mnemo/bot.db');
  });
});

describe('openCliStore on SQLite', () => {
  it('creates the file when writable, refuses a missing one when read-only or when it must exist', async () => {
    const path = join(directory, 'bot.db');
    await expect(openCliStore(path, { readonly: true })).rejects.toSatisfy((error: unknown) =>
      isMemoryError(error, 'not_found'),
    );
    await expect(openCliStore(path, { mustExist: true })).rejects.toSatisfy((error: unknown) =>
      isMemoryError(error, 'not_found'),
    );
    expect(existsSync(path)).toBe(false);
    const store = await openCliStore(path);
    expect(store).toBeInstanceOf(SqliteStore);
    await store.appendMessages(scope, [makeNewMessage('hello')]);
    await store.close();
    const reader = await openCliStore(path, { readonly: true });
    expect((await reader.listMessages(scope)).map((message) => message.content)).toEqual(['hello']);
    await reader.close();
  });
});

describeWithPostgres('openCliStore on PostgreSQL', (url) => {
  const schemas: string[] = [];
  afterAll(() => dropSchemas(url, schemas));

  it('opens the schema named by ?schema=, creating it when writable and refusing it missing when it must exist', async () => {
    const fresh = freshSchemaUrl(url);
    schemas.push(fresh.schema);
    await expect(openCliStore(fresh.url, { mustExist: true })).rejects.toSatisfy((error: unknown) =>
      isMemoryError(error, 'not_found'),
    );
    await expect(openCliStore(fresh.url, { readonly: true })).rejects.toSatisfy((error: unknown) =>
      isMemoryError(error, 'not_found'),
    );
    const store = await openCliStore(fresh.url);
    expect(store).toBeInstanceOf(PostgresStore);
    await store.appendMessages(scope, [makeNewMessage('over postgres')]);
    await store.close();
    const reader = await openCliStore(fresh.url, { readonly: true, mustExist: true });
    expect((await reader.listMessages(scope)).map((message) => message.content)).toEqual(['over postgres']);
    await reader.close();
  });
});

describe('openStoreWhenAvailable', () => {
  it('waits for a SQLite write lock another connection held past the busy timeout, and logs it once', async () => {
    const path = join(directory, 'locked.db');
    await (await openCliStore(path)).close();
    // Another process's writer, mid-transaction (a worker busy on the file while serve restarts after a crash).
    const holder = new Database(path);
    holder.exec('BEGIN IMMEDIATE');
    const warnings: string[] = [];
    const store = await openStoreWhenAvailable(path, {
      warn: (_details, message) => {
        warnings.push(message);
        // The first attempt waited out the busy timeout; the lock goes away before the next one.
        if (holder.inTransaction) holder.exec('COMMIT');
      },
    });
    holder.close();
    expect(store).toBeInstanceOf(SqliteStore);
    expect(warnings).toEqual(['the store is unavailable; trying again for up to 60 s']);
    await store.close();
  }, 30_000);
});
