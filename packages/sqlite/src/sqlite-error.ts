import { MemoryError } from '@mnemo/core';
import { toStorageError } from '@mnemo/core/store-kit';

/** The driver's error code (`SQLITE_BUSY`, `SQLITE_NOTADB`, …), or `undefined` for any other error. */
export function sqliteErrorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  const { code } = error as { code: unknown };
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined;
}

/**
 * Wraps a driver error into a MemoryError (a MemoryError passes through): a lock held past the busy
 * timeout is `unavailable` (retryable), a file that is not a database is `storage_failed` with that
 * said plainly, and anything else is `storage_failed` via `toStorageError`; the driver error is the `cause`.
 */
export function toSqliteError(error: unknown, action: string): MemoryError {
  if (error instanceof MemoryError) return error;
  const code = sqliteErrorCode(error);
  if (code?.startsWith('SQLITE_BUSY') === true || code?.startsWith('SQLITE_LOCKED') === true) {
    return new MemoryError('unavailable', `${action} failed: the database stayed locked by another connection past the busy timeout; retry`, {
      cause: error,
      details: { sqliteCode: code, retryable: true },
    });
  }
  if (code === 'SQLITE_NOTADB') {
    return new MemoryError('storage_failed', `${action} failed: the file is not a SQLite database (or is encrypted)`, {
      cause: error,
      details: { sqliteCode: code },
    });
  }
  return toStorageError(error, action);
}
