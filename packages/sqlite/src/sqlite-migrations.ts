import { MemoryError } from '@mnemo/core';
import type { SqliteDatabase } from './sqlite-driver.js';
import { toSqliteError } from './sqlite-error.js';

/** One step of the schema: `sql` takes a database at `version - 1` to `version`. Never edit a released step; add one. */
export interface SqliteMigration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

// Times are epoch milliseconds (INTEGER); JSON columns hold text. `tenant_id` leads every key and index so
// every query is confined to one tenant by the index it uses. STRICT makes SQLite reject a mistyped value
// instead of storing it.
const initialSchema = `
CREATE TABLE conversations (
  tenant_id       TEXT    NOT NULL,
  user_id         TEXT    NOT NULL,
  conversation_id TEXT    NOT NULL,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL,
  message_count   INTEGER NOT NULL,
  total_tokens    INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, user_id, conversation_id)
) STRICT;

CREATE TABLE messages (
  rowid           INTEGER PRIMARY KEY,
  id              TEXT    NOT NULL UNIQUE,
  tenant_id       TEXT    NOT NULL,
  user_id         TEXT    NOT NULL,
  conversation_id TEXT    NOT NULL,
  seq             INTEGER NOT NULL CHECK (seq >= 1),
  role            TEXT    NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
  content         TEXT    NOT NULL,
  name            TEXT,
  tool_calls      TEXT,
  tool_call_id    TEXT,
  created_at      INTEGER NOT NULL,
  metadata        TEXT,
  tokens          INTEGER NOT NULL CHECK (tokens >= 0),
  idempotency_key TEXT,
  UNIQUE (tenant_id, user_id, conversation_id, seq),
  FOREIGN KEY (tenant_id, user_id, conversation_id) REFERENCES conversations (tenant_id, user_id, conversation_id)
) STRICT;

CREATE UNIQUE INDEX messages_idempotency_key ON messages (tenant_id, user_id, conversation_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;

CREATE TABLE usage (
  id                  INTEGER PRIMARY KEY,
  tenant_id           TEXT    NOT NULL,
  user_id             TEXT    NOT NULL,
  conversation_id     TEXT    NOT NULL,
  kind                TEXT    NOT NULL,
  policy              TEXT    NOT NULL,
  sent_tokens         INTEGER NOT NULL,
  full_history_tokens INTEGER NOT NULL,
  created_at          INTEGER NOT NULL,
  FOREIGN KEY (tenant_id, user_id, conversation_id) REFERENCES conversations (tenant_id, user_id, conversation_id)
) STRICT;

CREATE INDEX usage_conversation ON usage (tenant_id, user_id, conversation_id);
`;

// Compaction: the watermark on the conversation, every summary version, the job queue, and summarizer
// costs in the ledger. Jobs are leased across tenants, so their lease index leads with status and time.
const compactionSchema = `
ALTER TABLE conversations ADD COLUMN summarized_through_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE conversations ADD COLUMN summarized_tokens INTEGER NOT NULL DEFAULT 0;

ALTER TABLE usage ADD COLUMN input_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage ADD COLUMN output_tokens INTEGER NOT NULL DEFAULT 0;

CREATE TABLE summaries (
  rowid              INTEGER PRIMARY KEY,
  id                 TEXT    NOT NULL,
  tenant_id          TEXT    NOT NULL,
  user_id            TEXT    NOT NULL,
  conversation_id    TEXT    NOT NULL,
  level              INTEGER NOT NULL CHECK (level >= 0),
  from_seq           INTEGER NOT NULL,
  to_seq             INTEGER NOT NULL,
  content            TEXT    NOT NULL,
  tokens             INTEGER NOT NULL,
  folded_summary_ids TEXT    NOT NULL,
  summarizer         TEXT    NOT NULL,
  input_tokens       INTEGER NOT NULL,
  output_tokens      INTEGER NOT NULL,
  fallback_reason    TEXT,
  created_at         INTEGER NOT NULL,
  UNIQUE (tenant_id, id),
  FOREIGN KEY (tenant_id, user_id, conversation_id) REFERENCES conversations (tenant_id, user_id, conversation_id)
) STRICT;

CREATE INDEX summaries_conversation ON summaries (tenant_id, user_id, conversation_id, rowid);

CREATE TABLE jobs (
  rowid              INTEGER PRIMARY KEY,
  id                 TEXT    NOT NULL UNIQUE,
  tenant_id          TEXT    NOT NULL,
  user_id            TEXT    NOT NULL,
  conversation_id    TEXT    NOT NULL,
  kind               TEXT    NOT NULL,
  status             TEXT    NOT NULL CHECK (status IN ('pending', 'running', 'done', 'failed')),
  attempts           INTEGER NOT NULL,
  max_attempts       INTEGER NOT NULL,
  run_at             INTEGER NOT NULL,
  lease_owner        TEXT,
  lease_expires_at   INTEGER,
  last_error         TEXT,
  created_at         INTEGER NOT NULL,
  updated_at         INTEGER NOT NULL
) STRICT;

CREATE INDEX jobs_conversation ON jobs (tenant_id, user_id, conversation_id, kind, status);
CREATE INDEX jobs_due ON jobs (status, run_at) WHERE status IN ('pending', 'running');
`;

// The memory tool's per-user directory. Directory queries compare a path prefix with substr, not LIKE,
// so '%' and '_' in file names need no escaping.
const memoryFilesSchema = `
CREATE TABLE memory_files (
  tenant_id  TEXT    NOT NULL,
  user_id    TEXT    NOT NULL,
  path       TEXT    NOT NULL,
  content    TEXT    NOT NULL,
  version    INTEGER NOT NULL CHECK (version >= 1),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, user_id, path)
) STRICT;
`;

/** The schema's steps in order; the database records the last one applied in `PRAGMA user_version`. */
export const sqliteMigrations: readonly SqliteMigration[] = Object.freeze([
  Object.freeze({ version: 1, name: 'conversations, messages and usage ledger', sql: initialSchema }),
  Object.freeze({ version: 2, name: 'summaries, jobs and summarizer costs', sql: compactionSchema }),
  Object.freeze({ version: 3, name: 'memory files', sql: memoryFilesSchema }),
]);

/** What {@link migrateSqliteDatabase} did: the version found, the version left, and the steps it ran. */
export interface SqliteMigrationResult {
  readonly fromVersion: number;
  readonly toVersion: number;
  readonly applied: readonly number[];
}

/** Options of {@link migrateSqliteDatabase}. */
export interface SqliteMigrateOptions {
  /** Steps to apply; default {@link sqliteMigrations}. Versions must run 1, 2, 3, … without gaps. */
  readonly migrations?: readonly SqliteMigration[];
  /** A read-only database cannot be migrated: one behind the code is refused instead. */
  readonly readonly?: boolean;
}

/**
 * Brings a database up to the newest schema version this code knows, in one `BEGIN IMMEDIATE`
 * transaction so that processes opening the same file at once migrate it exactly once. Throws
 * `storage_failed` for a database written by a newer version (left untouched), for a read-only
 * database that needs migrating, and for any driver failure (rolled back, with the driver error as `cause`).
 */
export function migrateSqliteDatabase(database: SqliteDatabase, options: SqliteMigrateOptions = {}): SqliteMigrationResult {
  const migrations = options.migrations ?? sqliteMigrations;
  const latest = checkMigrationOrder(migrations);
  const fromVersion = readSchemaVersion(database);
  assertKnownVersion(fromVersion, latest);
  if (fromVersion === latest) return { fromVersion, toVersion: latest, applied: [] };
  if (options.readonly === true) {
    throw new MemoryError(
      'storage_failed',
      `the database has schema version ${fromVersion} and needs migrating to ${latest}, which a read-only store cannot do; open it once writable`,
      { details: { schemaVersion: fromVersion, supportedVersion: latest } },
    );
  }
  try {
    const applied = database
      .transaction(() => {
        // Re-read under the write lock: another process may have migrated since the check above.
        const current = readSchemaVersion(database);
        assertKnownVersion(current, latest);
        const pending = migrations.filter((migration) => migration.version > current);
        for (const migration of pending) {
          database.exec(migration.sql);
          database.pragma(`user_version = ${migration.version}`);
        }
        return pending.map((migration) => migration.version);
      })
      .immediate();
    return { fromVersion, toVersion: latest, applied };
  } catch (error) {
    throw toSqliteError(error, `migrating the database to schema version ${latest}`);
  }
}

/** The schema version recorded in the database file (`PRAGMA user_version`); 0 for a new database. */
export function readSchemaVersion(database: SqliteDatabase): number {
  try {
    const version = database.pragma('user_version', { simple: true });
    if (typeof version !== 'number' || !Number.isInteger(version)) {
      throw new MemoryError('storage_failed', `PRAGMA user_version returned ${String(version)}, not an integer`);
    }
    return version;
  } catch (error) {
    throw toSqliteError(error, 'reading the schema version');
  }
}

function assertKnownVersion(version: number, latest: number): void {
  if (version <= latest) return;
  throw new MemoryError(
    'storage_failed',
    `the database has schema version ${version}, newer than version ${latest} that this @mnemo/sqlite knows; upgrade mnemo to open it`,
    { details: { schemaVersion: version, supportedVersion: latest } },
  );
}

function checkMigrationOrder(migrations: readonly SqliteMigration[]): number {
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new MemoryError('invalid_input', `migration ${JSON.stringify(migration.name)} has version ${migration.version}, expected ${index + 1}`, {
        details: { field: 'migrations', index },
      });
    }
  });
  return migrations.length;
}
