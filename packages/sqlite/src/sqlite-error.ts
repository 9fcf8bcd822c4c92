import { MemoryError } from '@mnemo/core';
import { toStorageError } from '@mnemo/core/store-kit';
import { isDiskFull, isWritableFile } from './sqlite-disk-space.js';

/** The driver's error code (`SQLITE_BUSY`, `SQLITE_NOTADB`, …), or `undefined` for any other error. */
export function sqliteErrorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  const { code } = error;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined;
}

/** What the mapping knows about the store beyond the error: its file (to tell a full disk) and whether it was opened read-only. */
export interface SqliteErrorContext {
  readonly path?: string;
  readonly readonly?: boolean;
}

/** Seconds a client is told to wait after the disk filled up or the file became unwritable: an operator has to act first. */
export const operatorRetryAfterSeconds = 30;

/**
 * Wraps a driver error into a MemoryError (a MemoryError passes through); the driver error is the `cause`:
 * - a lock held past the busy timeout: `unavailable` (retryable, `retryAfterSeconds` 1);
 * - a full disk (`SQLITE_FULL`, or an I/O error while the file's disk has under 1 MiB free): `unavailable`
 *   with `reason: 'disk_full'` and a message saying so;
 * - a file that cannot be written (`SQLITE_READONLY`, or an I/O error while the file or its WAL cannot be
 *   opened for writing: permissions, `chattr +i`, a read-only mount) of a store opened for writing:
 *   `unavailable` with `reason: 'read_only'`; of a read-only store: `storage_failed`;
 * - a damaged file (`SQLITE_CORRUPT`): `storage_failed` that says the file is damaged;
 * - a file that is not a database: `storage_failed` with that said plainly;
 * - anything else: `storage_failed` via `toStorageError`.
 */
export function toSqliteError(error: unknown, action: string, context: SqliteErrorContext = {}): MemoryError {
  if (error instanceof MemoryError) return error;
  const code = sqliteErrorCode(error);
  if (code?.startsWith('SQLITE_BUSY') === true || code?.startsWith('SQLITE_LOCKED') === true) {
    return new MemoryError(
      'unavailable',
      `${action} failed: the database stayed locked by another connection past the busy timeout; retry`,
      {
        cause: error,
        details: { sqliteCode: code, retryable: true, retryAfterSeconds: 1 },
      },
    );
  }
  if (
    code === 'SQLITE_FULL' ||
    (code?.startsWith('SQLITE_IOERR') === true && context.path !== undefined && isDiskFull(context.path))
  ) {
    return new MemoryError(
      'unavailable',
      `${action} failed: the disk holding the database is full; free some space, then retry (nothing was written)`,
      {
        cause: error,
        details: {
          sqliteCode: code,
          reason: 'disk_full',
          retryable: true,
          retryAfterSeconds: operatorRetryAfterSeconds,
        },
      },
    );
  }
  const unwritable =
    code?.startsWith('SQLITE_IOERR') === true && context.path !== undefined && !isWritableFile(context.path);
  if ((code?.startsWith('SQLITE_READONLY') === true || unwritable) && context.readonly !== true) {
    return new MemoryError(
      'unavailable',
      `${action} failed: the database file cannot be written (its permissions, an immutable flag or a read-only mount); make it writable, then retry`,
      {
        cause: error,
        details: {
          sqliteCode: code,
          reason: 'read_only',
          retryable: true,
          retryAfterSeconds: operatorRetryAfterSeconds,
        },
      },
    );
  }
  if (code?.startsWith('SQLITE_CORRUPT') === true) {
    return new MemoryError(
      'storage_failed',
      `${action} failed: the database file is damaged (${error instanceof Error ? error.message : code}); restore it from a backup`,
      {
        cause: error,
        details: { sqliteCode: code, reason: 'corrupt' },
      },
    );
  }
  if (code === 'SQLITE_NOTADB') {
    return new MemoryError('storage_failed', `${action} failed: the file is not a SQLite database (or is encrypted)`, {
      cause: error,
      details: { sqliteCode: code },
    });
  }
  return toStorageError(error, action);
}
