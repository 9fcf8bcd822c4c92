import { isMemoryError, MemoryError, type Scope } from '@mnemo/core';
import { makeNewMessage } from '@mnemo/core/testing';
import { describe, expect, it } from 'vitest';
import type { SqliteDatabase } from './sqlite-driver.js';
import { toSqliteError } from './sqlite-error.js';
import { SqliteStore } from './sqlite-store.js';

function driverError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

// A connection whose every statement fails with the given driver error, as a dying disk or a held lock would.
function failingDatabase(error: Error): SqliteDatabase {
  return {
    open: true,
    prepare: () => {
      throw error;
    },
    exec: () => {
      throw error;
    },
    pragma: () => {
      throw error;
    },
    transaction: <T>(fn: () => T) => Object.assign(() => fn(), { immediate: () => fn() }),
    close: () => undefined,
  };
}

const scope: Scope = { tenantId: 'tenant-a', userId: 'user-1', conversationId: 'conv-1' };

describe('toSqliteError', () => {
  it('maps a lock held past the busy timeout to retryable unavailable with the driver error as cause', () => {
    const cause = driverError('SQLITE_BUSY', 'database is locked');
    const error = toSqliteError(cause, 'appending messages');
    expect(error).toMatchObject({
      code: 'unavailable',
      cause,
      details: { sqliteCode: 'SQLITE_BUSY', retryable: true },
    });
  });

  it('maps any other driver error to storage_failed keeping the driver message and cause', () => {
    const cause = driverError('SQLITE_IOERR_WRITE', 'disk I/O error');
    const error = toSqliteError(cause, 'appending messages');
    expect(error).toMatchObject({ code: 'storage_failed', cause });
    expect(error.message).toBe('appending messages failed: disk I/O error');
  });

  it('passes a MemoryError through unchanged', () => {
    const original = new MemoryError('conflict', 'key reused');
    expect(toSqliteError(original, 'appending messages')).toBe(original);
  });
});

describe('toSqliteError on faults of the machine', () => {
  it('says a full disk is full, asks for a retry in 30 s, and keeps the cause', () => {
    const cause = driverError('SQLITE_FULL', 'database or disk is full');
    const error = toSqliteError(cause, 'appending messages', { path: '/srv/mnemo.db' });
    expect(error).toMatchObject({
      code: 'unavailable',
      cause,
      details: { reason: 'disk_full', retryAfterSeconds: 30 },
    });
    expect(error.message).toMatch(/the disk holding the database is full/);
  });

  it('says a file that cannot be written cannot be written, unless the store was opened read-only', () => {
    const cause = driverError('SQLITE_READONLY', 'attempt to write a readonly database');
    expect(toSqliteError(cause, 'appending messages')).toMatchObject({
      code: 'unavailable',
      details: { reason: 'read_only' },
    });
    expect(toSqliteError(cause, 'appending messages', { readonly: true })).toMatchObject({ code: 'storage_failed' });
  });

  it('says a damaged file is damaged', () => {
    const error = toSqliteError(
      driverError('SQLITE_CORRUPT', 'database disk image is malformed'),
      'reading a conversation',
    );
    expect(error).toMatchObject({ code: 'storage_failed', details: { reason: 'corrupt' } });
    expect(error.message).toMatch(/damaged/);
  });
});

describe('SqliteStore with a failing driver', () => {
  it('reports a damaged file in its readiness once a call ran into it, and from then on', async () => {
    const store = new SqliteStore(failingDatabase(driverError('SQLITE_CORRUPT', 'database disk image is malformed')));
    await expect(store.listMessages(scope)).rejects.toSatisfy((error: unknown) =>
      isMemoryError(error, 'storage_failed'),
    );
    const readiness = await store.checkReadiness();
    expect(readiness.ready).toBe(false);
    expect(readiness.checks.find((check) => check.name === 'integrity')).toMatchObject({
      ok: false,
      message: expect.stringMatching(/damaged/) as unknown,
    });
  });

  it('rejects with a typed error, never the raw driver error, when every statement fails', async () => {
    const cause = driverError('SQLITE_CORRUPT', 'database disk image is malformed');
    const store = new SqliteStore(failingDatabase(cause));
    await expect(store.listMessages(scope)).rejects.toSatisfy(
      (error: unknown) => isMemoryError(error, 'storage_failed') && error.cause === cause,
    );
    await expect(store.getUsageTotals(scope)).rejects.toSatisfy((error: unknown) =>
      isMemoryError(error, 'storage_failed'),
    );
  });

  it('rejects appends with unavailable when the driver reports the database busy', async () => {
    const store = new SqliteStore(failingDatabase(driverError('SQLITE_BUSY', 'database is locked')));
    await expect(store.appendMessages(scope, [makeNewMessage('hi')])).rejects.toSatisfy((error: unknown) =>
      isMemoryError(error, 'unavailable'),
    );
  });
});
