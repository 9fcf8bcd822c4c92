import type { ReadinessCheck, StoreReadiness } from '@mnemo/core';
import { freeDiskBytes, isWritableFile, minFreeDiskBytes } from './sqlite-disk-space.js';
import type { SqliteDatabase } from './sqlite-driver.js';
import { isSqliteBusy } from './sqlite-busy-retry.js';
import { toSqliteError, type SqliteErrorContext } from './sqlite-error.js';

/** What readiness knows of a SQLite store besides its connection. */
export interface SqliteReadinessState extends SqliteErrorContext {
  /** The damage a call of this store ran into, if any (a damaged page stays damaged). */
  readonly corruption: () => string | undefined;
  /** True while a full check of the file's pages runs (`SqliteStore.checkIntegrity`). */
  readonly checking?: () => boolean;
}

/**
 * Writes the schema version back as it is, in a `BEGIN IMMEDIATE` transaction: a real, committed write
 * of one page that changes nothing, so a file that cannot be written (or a disk that refuses the page)
 * shows up here instead of at a user's append. Throws the driver error.
 */
export function probeSqliteWrite(database: SqliteDatabase): void {
  database
    .transaction(() => {
      const version = Number(database.pragma('user_version', { simple: true }));
      database.pragma(`user_version = ${version}`);
    })
    .immediate();
}

/**
 * The readiness of a SQLite store: a read, a write (a lock held elsewhere is not a failure: writes wait
 * for it), the free space of the file's disk (under 1 MiB is full), and whether a call found the file
 * damaged. Synchronous and quick: the connection's busy timeout is 0, so nothing waits on a lock.
 */
export function checkSqliteReadiness(database: SqliteDatabase, state: SqliteReadinessState): StoreReadiness {
  const checks: ReadinessCheck[] = [];
  const attempt = (name: string, body: () => void, onBusy?: string) => {
    try {
      body();
      checks.push({ name, ok: true });
    } catch (error) {
      if (onBusy !== undefined && isSqliteBusy(error)) checks.push({ name, ok: true, message: onBusy });
      else
        checks.push({
          name,
          ok: false,
          message: toSqliteError(error, name === 'read' ? 'reading the database' : 'writing to the database', state)
            .message,
        });
    }
  };
  attempt('read', () => void database.prepare('SELECT 1 FROM conversations LIMIT 1').get());
  if (state.readonly !== true) {
    attempt(
      'write',
      () => {
        // The probe's page goes to the WAL; a main file that cannot be written fails only at the next
        // checkpoint (and the WAL then grows without end), so it is checked by itself.
        if (state.path !== undefined && !isWritableFile(state.path))
          throw Object.assign(new Error('the database file or its WAL cannot be opened for writing'), {
            code: 'SQLITE_READONLY',
          });
        probeSqliteWrite(database);
      },
      'another connection holds the write lock; writes wait for it',
    );
  }
  if (state.path !== undefined) {
    const free = freeDiskBytes(state.path);
    if (free !== undefined) {
      const ok = free >= minFreeDiskBytes;
      checks.push({
        name: 'disk',
        ok,
        message: ok
          ? `${free} bytes free`
          : `the disk holding the database has ${free} bytes free (under ${minFreeDiskBytes}); writes fail until space is freed`,
      });
    }
  }
  const corruption = state.corruption();
  checks.push(
    corruption !== undefined
      ? { name: 'integrity', ok: false, message: corruption }
      : {
          name: 'integrity',
          ok: true,
          ...(state.checking?.() === true ? { message: 'checking every page of the file' } : {}),
        },
  );
  return { ready: checks.every((check) => check.ok), checks };
}
