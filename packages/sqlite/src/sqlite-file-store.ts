import { MemoryError } from '@mnemo/core';
import type { MemoryFile, MemoryFileInfo, UserScope } from '@mnemo/core';
import {
  checkStoredMemoryPath,
  isWithinMemoryPath,
  memoryFileConflict,
  memoryFileFromRow,
  memoryFileInfoFromRow,
  type MemoryFileRow,
  type MemoryFileWrite,
} from '@mnemo/core/store-kit';
import type { SqliteDatabase } from './sqlite-driver.js';
import { createStatementCache, type SqliteStatementCache } from './sqlite-statement-cache.js';
import { toEpochMs, toIsoTime } from './sqlite-values.js';

const ofUser = 'tenant_id = ? AND user_id = ?';
// `path` is the directory itself or starts with `directory/`.
const underPath = "(path = ? OR substr(path, 1, length(?) + 1) = ? || '/')";

const sql = {
  select: `SELECT tenant_id, user_id, path, content, version, created_at, updated_at FROM memory_files WHERE ${ofUser} AND path = ?`,
  list: `SELECT tenant_id, user_id, path, length(CAST(content AS BLOB)) AS size_bytes, version, created_at, updated_at
    FROM memory_files WHERE ${ofUser} AND ${underPath} ORDER BY path`,
  upsert: `INSERT INTO memory_files (tenant_id, user_id, path, content, version, created_at, updated_at) VALUES (?, ?, ?, ?, 1, ?, ?)
    ON CONFLICT (tenant_id, user_id, path) DO UPDATE SET content = excluded.content, version = version + 1, updated_at = excluded.updated_at`,
  delete: `DELETE FROM memory_files WHERE ${ofUser} AND ${underPath}`,
  move: `UPDATE memory_files SET path = ? || substr(path, length(?) + 1), version = version + 1, updated_at = ? WHERE ${ofUser} AND ${underPath}`,
  deleteUser: `DELETE FROM memory_files WHERE ${ofUser}`,
} as const;

/** The SQL of memory files: one row per file, versioned for optimistic concurrency. */
export class SqliteFileStore {
  readonly #database: SqliteDatabase;
  readonly #statement: SqliteStatementCache;

  constructor(database: SqliteDatabase) {
    this.#database = database;
    this.#statement = createStatementCache(database);
  }

  getMemoryFile(user: UserScope, path: string): MemoryFile | undefined {
    const row = this.#statement(sql.select).get(user.tenantId, user.userId, checkStoredMemoryPath(path)) as
      MemoryFileRow | undefined;
    return row === undefined ? undefined : toFile(row);
  }

  listMemoryFiles(user: UserScope, directory: string): MemoryFileInfo[] {
    const root = checkStoredMemoryPath(directory);
    return (this.#statement(sql.list).all(user.tenantId, user.userId, root, root, root) as MemoryFileRow[]).map(toInfo);
  }

  /** Checks the expected version and writes in one `BEGIN IMMEDIATE` transaction. */
  putMemoryFile(user: UserScope, write: MemoryFileWrite): MemoryFile {
    const path = checkStoredMemoryPath(write.path);
    const nowMs = toEpochMs('now', write.now);
    return this.#database
      .transaction(() => {
        const existing = this.getMemoryFile(user, path);
        if (write.expectedVersion !== undefined && (existing?.version ?? 0) !== write.expectedVersion) {
          throw memoryFileConflict(path, write.expectedVersion, existing?.version ?? 0);
        }
        this.#statement(sql.upsert).run(user.tenantId, user.userId, path, write.content, nowMs, nowMs);
        return this.getMemoryFile(user, path)!;
      })
      .immediate();
  }

  deleteMemoryFiles(user: UserScope, path: string): number {
    const root = checkStoredMemoryPath(path);
    return this.#statement(sql.delete).run(user.tenantId, user.userId, root, root, root).changes;
  }

  renameMemoryFiles(user: UserScope, from: string, to: string, now: string): number {
    const source = checkStoredMemoryPath(from);
    const target = checkStoredMemoryPath(to);
    const nowMs = toEpochMs('now', now);
    if (isWithinMemoryPath(target, source))
      throw new MemoryError('invalid_input', `cannot move ${source} into itself`, { details: { path: target } });
    return this.#database
      .transaction(() => {
        if (this.listMemoryFiles(user, source).length === 0)
          throw new MemoryError('not_found', `nothing at ${source}`, { details: { path: source } });
        if (this.listMemoryFiles(user, target).length > 0)
          throw new MemoryError('conflict', `${target} already exists`, { details: { path: target } });
        return this.#statement(sql.move).run(target, source, nowMs, user.tenantId, user.userId, source, source, source)
          .changes;
      })
      .immediate();
  }

  /** Removes every file of a user (inside the caller's erase transaction). */
  deleteUser(user: UserScope): void {
    this.#statement(sql.deleteUser).run(user.tenantId, user.userId);
  }
}

function toFile(row: MemoryFileRow): MemoryFile {
  return memoryFileFromRow(row, toIsoTime);
}

function toInfo(row: MemoryFileRow): MemoryFileInfo {
  return memoryFileInfoFromRow(row, toIsoTime);
}
