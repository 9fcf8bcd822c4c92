import { MemoryError } from '@mnemo/core';
import type { SqliteDatabase } from './sqlite-driver.js';
import { toSqliteError } from './sqlite-error.js';
import { binaryVectorSearchStep } from './sqlite-vector-codes-migration.js';
import { projectedCodesStep } from './sqlite-projected-codes-migration.js';
import { vectorTableStep } from './sqlite-vector-table-migration.js';

/** One step of the schema: `sql` takes a database at `version - 1` to `version`. Never edit a released step; add one. */
export interface SqliteMigration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
  /** Work that depends on the data (e.g. one table per embedding model), run after `sql` in the same transaction. */
  readonly apply?: (database: SqliteDatabase) => void;
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

// Recall and knowledge. Keyword search: a contentless FTS5 index (porter stemming) whose `owner` column
// holds one token per tenant+user, so a MATCH is confined to one user's messages inside FTS itself.
// Vectors live in one sqlite-vec table per model (created on first use, dimensions differ per model);
// `message_embeddings` records which messages have a vector of which model. Facts, entities and
// relations are per user; `cursors` are compare-and-set progress marks of background work.
const knowledgeSchema = `
CREATE VIRTUAL TABLE messages_fts USING fts5(owner, content, content='', contentless_delete=1,
  tokenize='porter unicode61 remove_diacritics 2');

INSERT INTO messages_fts (rowid, owner, content)
  SELECT rowid, 'o' || hex(tenant_id || char(31) || user_id), content FROM messages;

CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
  INSERT INTO messages_fts (rowid, owner, content) VALUES (new.rowid, 'o' || hex(new.tenant_id || char(31) || new.user_id), new.content);
END;

CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
  DELETE FROM messages_fts WHERE rowid = old.rowid;
END;

CREATE INDEX messages_user_time ON messages (tenant_id, user_id, created_at);

CREATE TABLE embedding_models (
  id         INTEGER PRIMARY KEY,
  model      TEXT    NOT NULL UNIQUE,
  dimensions INTEGER NOT NULL CHECK (dimensions > 0)
) STRICT;

CREATE TABLE message_embeddings (
  model_id        INTEGER NOT NULL REFERENCES embedding_models (id),
  message_rowid   INTEGER NOT NULL,
  tenant_id       TEXT    NOT NULL,
  user_id         TEXT    NOT NULL,
  conversation_id TEXT    NOT NULL,
  PRIMARY KEY (model_id, message_rowid)
) STRICT, WITHOUT ROWID;

CREATE INDEX message_embeddings_owner ON message_embeddings (tenant_id, user_id, conversation_id, model_id);

CREATE TABLE facts (
  rowid                  INTEGER PRIMARY KEY,
  id                     TEXT    NOT NULL,
  tenant_id              TEXT    NOT NULL,
  user_id                TEXT    NOT NULL,
  subject                TEXT    NOT NULL,
  attribute              TEXT    NOT NULL,
  value                  TEXT    NOT NULL,
  text                   TEXT    NOT NULL,
  confidence             REAL    NOT NULL,
  valid_from             INTEGER NOT NULL,
  valid_to               INTEGER,
  superseded_by          TEXT,
  source_conversation_id TEXT,
  source_seqs            TEXT    NOT NULL,
  extractor              TEXT    NOT NULL,
  created_at             INTEGER NOT NULL,
  UNIQUE (tenant_id, id)
) STRICT;

CREATE INDEX facts_user ON facts (tenant_id, user_id, attribute, valid_to);

CREATE TABLE entities (
  rowid       INTEGER PRIMARY KEY,
  id          TEXT    NOT NULL,
  tenant_id   TEXT    NOT NULL,
  user_id     TEXT    NOT NULL,
  name        TEXT    NOT NULL,
  type        TEXT    NOT NULL,
  aliases     TEXT    NOT NULL,
  description TEXT,
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL,
  UNIQUE (tenant_id, id)
) STRICT;

CREATE TABLE entity_names (
  tenant_id TEXT NOT NULL,
  user_id   TEXT NOT NULL,
  name      TEXT NOT NULL,
  entity_id TEXT NOT NULL,
  PRIMARY KEY (tenant_id, user_id, name)
) STRICT, WITHOUT ROWID;

CREATE TABLE relations (
  rowid                  INTEGER PRIMARY KEY,
  id                     TEXT    NOT NULL,
  tenant_id              TEXT    NOT NULL,
  user_id                TEXT    NOT NULL,
  subject_id             TEXT    NOT NULL,
  predicate              TEXT    NOT NULL,
  object_id              TEXT    NOT NULL,
  valid_from             INTEGER NOT NULL,
  valid_to               INTEGER,
  source_conversation_id TEXT,
  source_seqs            TEXT    NOT NULL,
  created_at             INTEGER NOT NULL,
  UNIQUE (tenant_id, id)
) STRICT;

CREATE INDEX relations_subject ON relations (tenant_id, user_id, subject_id);
CREATE INDEX relations_object ON relations (tenant_id, user_id, object_id);

CREATE TABLE cursors (
  tenant_id       TEXT    NOT NULL,
  user_id         TEXT    NOT NULL,
  conversation_id TEXT    NOT NULL,
  name            TEXT    NOT NULL,
  position        INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, user_id, conversation_id, name)
) STRICT, WITHOUT ROWID;
`;

// The caller's JSON object about a conversation (Store.updateConversationMetadata), as text; NULL until
// set, so rows written before this step read `metadata: undefined`.
const conversationMetadataSchema = `
ALTER TABLE conversations ADD COLUMN metadata TEXT;
`;

// Keyword search ranks in each process's memory (decision 0027), so the FTS5 index and its triggers go.
// A process reads a user's messages after the newest rowid it has seen (`messages_user_rowid`: the
// user's rows in rowid order); a deletion is counted per user in `message_deletions` by a trigger, which
// tells a process that its copy is stale; erasing a user removes their count and counts an erasure in
// `vector_erasures`, which every copy, of vectors and of words, watches.
const keywordIndexSchema = `
DROP TRIGGER messages_fts_insert;
DROP TRIGGER messages_fts_delete;
DROP TABLE messages_fts;

CREATE INDEX messages_user_rowid ON messages (tenant_id, user_id);

CREATE TABLE message_deletions (
  tenant_id TEXT    NOT NULL,
  user_id   TEXT    NOT NULL,
  deletions INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, user_id)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER messages_deleted AFTER DELETE ON messages BEGIN
  INSERT INTO message_deletions (tenant_id, user_id, deletions) VALUES (old.tenant_id, old.user_id, 1)
    ON CONFLICT (tenant_id, user_id) DO UPDATE SET deletions = deletions + 1;
END;
`;

// Erasure of single messages (Store.eraseMessages): a conversation counts its erased messages, whose
// seqs are never given again (message_count stays the last seq); the audit log keeps each erasure's
// selection and counts, never content.
const erasureSchema = `
ALTER TABLE conversations ADD COLUMN erased_messages INTEGER NOT NULL DEFAULT 0;

CREATE TABLE erasures (
  rowid     INTEGER PRIMARY KEY,
  id        TEXT    NOT NULL UNIQUE,
  tenant_id TEXT    NOT NULL,
  user_id   TEXT    NOT NULL,
  selection TEXT    NOT NULL,
  counts    TEXT    NOT NULL,
  erased_at INTEGER NOT NULL
) STRICT;

CREATE INDEX erasures_user ON erasures (tenant_id, user_id);
`;

// Facts that expire (issue 26): past expires_at (epoch ms) a fact leaves current listings and contexts
// but stays in its history.
const factExpirySchema = `
ALTER TABLE facts ADD COLUMN expires_at INTEGER;
`;

/** The schema's steps in order; the database records the last one applied in `PRAGMA user_version`. */
export const sqliteMigrations: readonly SqliteMigration[] = Object.freeze([
  Object.freeze({ version: 1, name: 'conversations, messages and usage ledger', sql: initialSchema }),
  Object.freeze({ version: 2, name: 'summaries, jobs and summarizer costs', sql: compactionSchema }),
  Object.freeze({ version: 3, name: 'memory files', sql: memoryFilesSchema }),
  Object.freeze({ version: 4, name: 'keyword and vector indexes, facts, entity graph, cursors', sql: knowledgeSchema }),
  Object.freeze({ version: 5, name: 'conversation metadata', sql: conversationMetadataSchema }),
  binaryVectorSearchStep,
  vectorTableStep,
  Object.freeze({ version: 8, name: 'keyword index in memory', sql: keywordIndexSchema }),
  Object.freeze({ version: 9, name: 'message erasure and its audit log', sql: erasureSchema }),
  Object.freeze({ version: 10, name: 'fact expiry', sql: factExpirySchema }),
  projectedCodesStep,
]);

/** What {@link migrateSqliteSchema} did: the version found, the version left, and the steps it ran. */
export interface SqliteMigrationResult {
  readonly fromVersion: number;
  readonly toVersion: number;
  readonly applied: readonly number[];
}

/** Options of {@link migrateSqliteSchema}. */
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
export function migrateSqliteSchema(
  database: SqliteDatabase,
  options: SqliteMigrateOptions = {},
): SqliteMigrationResult {
  const migrations = options.migrations ?? sqliteMigrations;
  const latest = checkMigrationOrder(migrations);
  const fromVersion = readSqliteSchemaVersion(database);
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
        const current = readSqliteSchemaVersion(database);
        assertKnownVersion(current, latest);
        const pending = migrations.filter((migration) => migration.version > current);
        for (const migration of pending) {
          database.exec(migration.sql);
          migration.apply?.(database);
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
export function readSqliteSchemaVersion(database: SqliteDatabase): number {
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
      throw new MemoryError(
        'invalid_input',
        `migration ${JSON.stringify(migration.name)} has version ${migration.version}, expected ${index + 1}`,
        {
          details: { field: 'migrations', index },
        },
      );
    }
  });
  return migrations.length;
}
