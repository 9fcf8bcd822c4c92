import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMemoryError, MemoryError, type Scope } from '@mnemo/core';
import { makeNewMessage } from '@mnemo/core/testing';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  migrateSqliteSchema,
  readSqliteSchemaVersion,
  sqliteMigrations,
  type SqliteMigration,
} from './sqlite-migrations.js';
import { createSqliteStore } from './sqlite-store.js';

const scope: Scope = { tenantId: 'tenant-a', userId: 'user-1', conversationId: 'conv-1' };
const latestVersion = sqliteMigrations.length;

function captureError(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error('expected the action to throw');
}

describe('migrateSqliteSchema', () => {
  let directory: string;
  let path: string;
  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'mnemo-sqlite-migrations-'));
    path = join(directory, 'mnemo.db');
  });
  afterEach(() => {
    rmSync(directory, { recursive: true, force: true });
  });

  it('keeps the data and runs no migration again when an existing file is reopened', async () => {
    const first = createSqliteStore({ path });
    await first.appendMessages(scope, [makeNewMessage('before reopen')]);
    await first.close();
    const raw = new Database(path);
    try {
      expect(readSqliteSchemaVersion(raw)).toBe(latestVersion);
      expect(migrateSqliteSchema(raw)).toEqual({ fromVersion: latestVersion, toVersion: latestVersion, applied: [] });
    } finally {
      raw.close();
    }
    const second = createSqliteStore({ path });
    try {
      expect((await second.listMessages(scope)).map((message) => message.content)).toEqual(['before reopen']);
      await second.appendMessages(scope, [makeNewMessage('after reopen')]);
      expect((await second.listMessages(scope)).map((message) => message.seq)).toEqual([1, 2]);
    } finally {
      await second.close();
    }
  });

  it('applies only the steps newer than the recorded version when the code gains a migration', () => {
    const probe: SqliteMigration = {
      version: latestVersion + 1,
      name: 'probe',
      sql: 'CREATE TABLE probe (n INTEGER); INSERT INTO probe VALUES (1);',
    };
    const raw = new Database(path);
    try {
      expect(migrateSqliteSchema(raw).applied).toEqual(sqliteMigrations.map((migration) => migration.version));
      expect(migrateSqliteSchema(raw, { migrations: [...sqliteMigrations, probe] })).toEqual({
        fromVersion: latestVersion,
        toVersion: latestVersion + 1,
        applied: [latestVersion + 1],
      });
      expect(migrateSqliteSchema(raw, { migrations: [...sqliteMigrations, probe] }).applied).toEqual([]);
      expect(raw.prepare('SELECT count(*) AS n FROM probe').get()).toEqual({ n: 1 });
    } finally {
      raw.close();
    }
  });

  it('rolls back the whole step and keeps the old version when a migration fails halfway', () => {
    const broken: SqliteMigration = {
      version: latestVersion + 1,
      name: 'broken',
      sql: 'CREATE TABLE half (n INTEGER); INSERT INTO nowhere VALUES (1);',
    };
    const raw = new Database(path);
    try {
      migrateSqliteSchema(raw);
      const error = captureError(() => migrateSqliteSchema(raw, { migrations: [...sqliteMigrations, broken] }));
      expect(isMemoryError(error, 'storage_failed')).toBe(true);
      expect(readSqliteSchemaVersion(raw)).toBe(latestVersion);
      expect(raw.prepare("SELECT count(*) AS n FROM sqlite_schema WHERE name = 'half'").get()).toEqual({ n: 0 });
    } finally {
      raw.close();
    }
  });

  it('migrates a version 4 file to conversation metadata, reading its old rows with metadata undefined', async () => {
    const raw = new Database(path);
    try {
      migrateSqliteSchema(raw, { migrations: sqliteMigrations.slice(0, 4) });
      raw
        .prepare(
          'INSERT INTO conversations (tenant_id, user_id, conversation_id, created_at, updated_at, message_count, total_tokens) VALUES (?, ?, ?, 0, 0, 2, 4)',
        )
        .run(scope.tenantId, scope.userId, scope.conversationId);
      const insert = raw.prepare(
        'INSERT INTO messages (id, tenant_id, user_id, conversation_id, seq, role, content, created_at, tokens) VALUES (?, ?, ?, ?, ?, ?, ?, 0, 2)',
      );
      insert.run('m1', scope.tenantId, scope.userId, scope.conversationId, 1, 'user', 'hi');
      insert.run('m2', scope.tenantId, scope.userId, scope.conversationId, 2, 'assistant', 'yo');
    } finally {
      raw.close();
    }
    const store = createSqliteStore({ path });
    try {
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
    const after = new Database(path);
    try {
      expect(readSqliteSchemaVersion(after)).toBe(latestVersion);
    } finally {
      after.close();
    }
  });

  it('refuses a file with a newer schema version with a typed error and leaves it untouched', async () => {
    const store = createSqliteStore({ path });
    await store.appendMessages(scope, [makeNewMessage('from the future')]);
    await store.close();
    const raw = new Database(path);
    raw.pragma(`user_version = ${latestVersion + 7}`);
    raw.close();

    const error = captureError(() => createSqliteStore({ path }));
    expect(error).toBeInstanceOf(MemoryError);
    expect(error).toMatchObject({
      code: 'storage_failed',
      details: { schemaVersion: latestVersion + 7, supportedVersion: latestVersion },
    });
    expect((error as MemoryError).message).toMatch(/newer than version \d+.*upgrade mnemo/);

    const after = new Database(path);
    try {
      expect(readSqliteSchemaVersion(after)).toBe(latestVersion + 7);
      expect(after.prepare('SELECT content FROM messages').all()).toEqual([{ content: 'from the future' }]);
    } finally {
      after.close();
    }
  });

  it('refuses a file that is not a SQLite database with a typed error wrapping the driver error, without changing the file', () => {
    const text = 'this is a plain text file, not a database\n'.repeat(100);
    writeFileSync(path, text);
    const error = captureError(() => createSqliteStore({ path }));
    expect(error).toBeInstanceOf(MemoryError);
    expect(error).toMatchObject({
      code: 'storage_failed',
      cause: expect.objectContaining({ code: 'SQLITE_NOTADB' }) as unknown,
    });
    expect((error as MemoryError).message).toContain('not a SQLite database');
    expect((error as MemoryError).message).toContain(path);
    expect(readFileSync(path, 'utf8')).toBe(text);
  });

  it('refuses to migrate a database opened read-only when it is behind the code', () => {
    new Database(path).close();
    const error = captureError(() => createSqliteStore({ path, readonly: true }));
    expect(error).toMatchObject({
      code: 'storage_failed',
      details: { schemaVersion: 0, supportedVersion: latestVersion },
    });
  });
});
