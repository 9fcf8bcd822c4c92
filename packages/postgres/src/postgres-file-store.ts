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
import type { PostgresClient, PostgresPool, PostgresQueryable } from './postgres-driver.js';
import { isUniqueViolation } from './postgres-error.js';
import type { PostgresTables } from './postgres-tables.js';
import { runInTransaction } from './postgres-transaction.js';
import { checkTime, toIsoTime } from './postgres-values.js';

const fileColumns = 'tenant_id, user_id, path, content, version, created_at, updated_at';
const ofUser = 'tenant_id = $1 AND user_id = $2';
// `path` is the directory $3 itself or lies under it.
const underPath = "(path = $3 OR starts_with(path, $3 || '/'))";

function statements(t: PostgresTables) {
  return {
    select: `SELECT ${fileColumns} FROM ${t.memoryFiles} WHERE ${ofUser} AND path = $3`,
    list: `SELECT tenant_id, user_id, path, octet_length(content) AS size_bytes, version, created_at, updated_at
      FROM ${t.memoryFiles} WHERE ${ofUser} AND ${underPath} ORDER BY path`,
    // Each write is one statement that checks the expected version itself, so two writers racing on one
    // file cannot both pass the check: the loser's statement matches no row.
    create: `INSERT INTO ${t.memoryFiles} (${fileColumns}) VALUES ($1, $2, $3, $4, 1, $5, $5) ON CONFLICT DO NOTHING RETURNING ${fileColumns}`,
    update: `UPDATE ${t.memoryFiles} SET content = $4, version = version + 1, updated_at = $5 WHERE ${ofUser} AND path = $3 AND version = $6
      RETURNING ${fileColumns}`,
    upsert: `INSERT INTO ${t.memoryFiles} AS file (${fileColumns}) VALUES ($1, $2, $3, $4, 1, $5, $5)
      ON CONFLICT (tenant_id, user_id, path) DO UPDATE SET content = excluded.content, version = file.version + 1, updated_at = excluded.updated_at
      RETURNING ${fileColumns}`,
    delete: `DELETE FROM ${t.memoryFiles} WHERE ${ofUser} AND ${underPath}`,
    lockUnder: `SELECT path FROM ${t.memoryFiles} WHERE ${ofUser} AND ${underPath} ORDER BY path FOR UPDATE`,
    anyUnder: `SELECT 1 FROM ${t.memoryFiles} WHERE ${ofUser} AND ${underPath} LIMIT 1`,
    move: `UPDATE ${t.memoryFiles} SET path = $4 || substr(path, length($3) + 1), version = version + 1, updated_at = $5 WHERE ${ofUser} AND ${underPath}`,
    deleteUser: `DELETE FROM ${t.memoryFiles} WHERE ${ofUser}`,
  };
}

/** The SQL of memory files: one row per file, versioned for optimistic concurrency. */
export class PostgresFileStore {
  readonly #pool: PostgresPool;
  readonly #sql: ReturnType<typeof statements>;

  constructor(pool: PostgresPool, tables: PostgresTables) {
    this.#pool = pool;
    this.#sql = statements(tables);
  }

  async getMemoryFile(user: UserScope, path: string): Promise<MemoryFile | undefined> {
    return this.#select(this.#pool, user, checkStoredMemoryPath(path));
  }

  async listMemoryFiles(user: UserScope, directory: string): Promise<MemoryFileInfo[]> {
    const root = checkStoredMemoryPath(directory);
    return (await this.#pool.query<MemoryFileRow>(this.#sql.list, [user.tenantId, user.userId, root])).rows.map(toInfo);
  }

  /** Writes with the expected version checked by the writing statement itself; `conflict` when it does not match. */
  async putMemoryFile(user: UserScope, write: MemoryFileWrite): Promise<MemoryFile> {
    const path = checkStoredMemoryPath(write.path);
    const now = checkTime('now', write.now);
    const key = [user.tenantId, user.userId, path, write.content, now];
    const expected = write.expectedVersion;
    const result =
      expected === undefined
        ? await this.#pool.query<MemoryFileRow>(this.#sql.upsert, key)
        : expected === 0
          ? await this.#pool.query<MemoryFileRow>(this.#sql.create, key)
          : await this.#pool.query<MemoryFileRow>(this.#sql.update, [...key, expected]);
    const row = result.rows[0];
    if (row !== undefined) return toFile(row);
    // Read only to word the error: the write itself already failed atomically.
    const actual = await this.#select(this.#pool, user, path);
    throw memoryFileConflict(path, expected ?? 0, actual?.version ?? 0);
  }

  async deleteMemoryFiles(user: UserScope, path: string): Promise<number> {
    const root = checkStoredMemoryPath(path);
    return (await this.#pool.query(this.#sql.delete, [user.tenantId, user.userId, root])).rowCount ?? 0;
  }

  /** Moves a file or directory in one transaction; a file created at the target meanwhile makes it a `conflict`. */
  async renameMemoryFiles(user: UserScope, from: string, to: string, now: string): Promise<number> {
    const source = checkStoredMemoryPath(from);
    const target = checkStoredMemoryPath(to);
    const time = checkTime('now', now);
    if (isWithinMemoryPath(target, source))
      throw new MemoryError('invalid_input', `cannot move ${source} into itself`, { details: { path: target } });
    try {
      return await runInTransaction(this.#pool, async (client) => {
        const moving = await client.query(this.#sql.lockUnder, [user.tenantId, user.userId, source]);
        if (moving.rowCount === 0)
          throw new MemoryError('not_found', `nothing at ${source}`, { details: { path: source } });
        if (((await client.query(this.#sql.anyUnder, [user.tenantId, user.userId, target])).rowCount ?? 0) > 0)
          throw targetExists(target);
        return (await client.query(this.#sql.move, [user.tenantId, user.userId, source, target, time])).rowCount ?? 0;
      });
    } catch (error) {
      // The check above saw the target free, but a concurrent write created a file there before the move.
      if (isUniqueViolation(error)) throw targetExists(target, error);
      throw error;
    }
  }

  /** Removes every file of a user, inside the caller's erase transaction. */
  async deleteUser(client: PostgresClient, user: UserScope): Promise<void> {
    await client.query(this.#sql.deleteUser, [user.tenantId, user.userId]);
  }

  async #select(queryable: PostgresQueryable, user: UserScope, path: string): Promise<MemoryFile | undefined> {
    const row = (await queryable.query<MemoryFileRow>(this.#sql.select, [user.tenantId, user.userId, path])).rows[0];
    return row === undefined ? undefined : toFile(row);
  }
}

function targetExists(target: string, cause?: unknown): MemoryError {
  return new MemoryError('conflict', `${target} already exists`, {
    details: { path: target },
    ...(cause === undefined ? {} : { cause }),
  });
}

function toFile(row: MemoryFileRow): MemoryFile {
  return memoryFileFromRow(row, toIsoTime);
}

function toInfo(row: MemoryFileRow): MemoryFileInfo {
  return memoryFileInfoFromRow(row, toIsoTime);
}
