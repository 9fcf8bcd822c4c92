import { MemoryError } from '@mnemo/core';
import type { PostgresPool, PostgresQueryable } from './postgres-driver.js';
import { toPostgresError } from './postgres-error.js';
import { postgresKeywordTermsMigrationSql } from './postgres-keyword-terms-migration.js';
import { postgresSearchMigrationSql } from './postgres-search-migration.js';
import { defaultPostgresSchema, postgresTables } from './postgres-tables.js';
import { runInTransaction } from './postgres-transaction.js';

/**
 * One step of the schema: `sql` takes a schema at `version - 1` to `version`. It runs with `search_path`
 * set to the store's schema, so it names tables unqualified. Never edit a released step; add one.
 */
export interface PostgresMigration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

// `tenant_id` leads every key and index, so every query is confined to one tenant by the index it uses.
// Ids, keys and paths use the "C" collation: byte order, as SQLite's BINARY, so paging and directory
// listings sort the same on every store and every server locale. Times are timestamptz (millisecond
// values from the caller's clock); JSON columns are `json`, which keeps the caller's text as it was sent.
// The job queue is the one cross-tenant reader (the port says so): workers lease by due time across
// tenants and complete by job id, so `jobs_due` and `jobs_id` are the two indexes that tenant_id does not lead.
const initialSchema = `
CREATE TABLE conversations (
  tenant_id              text COLLATE "C" NOT NULL,
  user_id                text COLLATE "C" NOT NULL,
  conversation_id        text COLLATE "C" NOT NULL,
  created_at             timestamptz NOT NULL,
  updated_at             timestamptz NOT NULL,
  message_count          bigint NOT NULL DEFAULT 0,
  total_tokens           bigint NOT NULL DEFAULT 0,
  summarized_through_seq bigint NOT NULL DEFAULT 0,
  summarized_tokens      bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, user_id, conversation_id)
);

CREATE TABLE messages (
  tenant_id       text COLLATE "C" NOT NULL,
  user_id         text COLLATE "C" NOT NULL,
  conversation_id text COLLATE "C" NOT NULL,
  seq             bigint NOT NULL CHECK (seq >= 1),
  id              text COLLATE "C" NOT NULL,
  role            text NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
  content         text NOT NULL,
  name            text,
  tool_calls      json,
  tool_call_id    text,
  created_at      timestamptz NOT NULL,
  metadata        json,
  tokens          bigint NOT NULL CHECK (tokens >= 0),
  idempotency_key text COLLATE "C",
  search_vector   tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED,
  PRIMARY KEY (tenant_id, user_id, conversation_id, seq),
  CONSTRAINT messages_id UNIQUE (tenant_id, id),
  FOREIGN KEY (tenant_id, user_id, conversation_id) REFERENCES conversations (tenant_id, user_id, conversation_id)
);

CREATE UNIQUE INDEX messages_idempotency_key ON messages (tenant_id, user_id, conversation_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;

CREATE TABLE usage (
  tenant_id           text COLLATE "C" NOT NULL,
  user_id             text COLLATE "C" NOT NULL,
  conversation_id     text COLLATE "C" NOT NULL,
  position            bigint GENERATED ALWAYS AS IDENTITY,
  kind                text NOT NULL,
  policy              text NOT NULL,
  sent_tokens         bigint NOT NULL,
  full_history_tokens bigint NOT NULL,
  input_tokens        bigint NOT NULL DEFAULT 0,
  output_tokens       bigint NOT NULL DEFAULT 0,
  created_at          timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, user_id, conversation_id, position),
  FOREIGN KEY (tenant_id, user_id, conversation_id) REFERENCES conversations (tenant_id, user_id, conversation_id)
);

CREATE TABLE summaries (
  tenant_id          text COLLATE "C" NOT NULL,
  user_id            text COLLATE "C" NOT NULL,
  conversation_id    text COLLATE "C" NOT NULL,
  position           bigint GENERATED ALWAYS AS IDENTITY,
  id                 text COLLATE "C" NOT NULL,
  level              bigint NOT NULL CHECK (level >= 0),
  from_seq           bigint NOT NULL,
  to_seq             bigint NOT NULL,
  content            text NOT NULL,
  tokens             bigint NOT NULL,
  folded_summary_ids json NOT NULL,
  summarizer         text NOT NULL,
  input_tokens       bigint NOT NULL,
  output_tokens      bigint NOT NULL,
  fallback_reason    text,
  created_at         timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, user_id, conversation_id, position),
  CONSTRAINT summaries_id UNIQUE (tenant_id, id),
  FOREIGN KEY (tenant_id, user_id, conversation_id) REFERENCES conversations (tenant_id, user_id, conversation_id)
);

CREATE TABLE jobs (
  tenant_id        text COLLATE "C" NOT NULL,
  user_id          text COLLATE "C" NOT NULL,
  conversation_id  text COLLATE "C" NOT NULL,
  position         bigint GENERATED ALWAYS AS IDENTITY,
  id               text COLLATE "C" NOT NULL,
  kind             text NOT NULL,
  status           text NOT NULL CHECK (status IN ('pending', 'running', 'done', 'failed')),
  attempts         bigint NOT NULL,
  max_attempts     bigint NOT NULL,
  run_at           timestamptz NOT NULL,
  lease_owner      text,
  lease_expires_at timestamptz,
  last_error       text,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, user_id, conversation_id, position),
  CONSTRAINT jobs_id UNIQUE (id)
);

CREATE INDEX jobs_due ON jobs (run_at, position) WHERE status IN ('pending', 'running');

CREATE TABLE memory_files (
  tenant_id  text COLLATE "C" NOT NULL,
  user_id    text COLLATE "C" NOT NULL,
  path       text COLLATE "C" NOT NULL,
  content    text NOT NULL,
  version    bigint NOT NULL CHECK (version >= 1),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, user_id, path)
);
`;

// Recall and knowledge. Keyword search ranks the `search_vector` lexemes of messages (English stemming)
// by BM25 computed in SQL over one user's messages; vectors are real[] with their norm, compared by cosine
// in SQL. Both scan the user's rows through the tenant-led keys: the GIN and pgvector indexes come later.
// `embedding_models` fixes each model's dimensions per tenant. Facts, entities and relations are per
// user; `cursors` are compare-and-set progress marks of background work.
const knowledgeSchema = `
CREATE TABLE embedding_models (
  tenant_id  text COLLATE "C" NOT NULL,
  model      text COLLATE "C" NOT NULL,
  dimensions integer NOT NULL CHECK (dimensions > 0),
  PRIMARY KEY (tenant_id, model)
);

CREATE TABLE message_vectors (
  tenant_id       text COLLATE "C" NOT NULL,
  user_id         text COLLATE "C" NOT NULL,
  conversation_id text COLLATE "C" NOT NULL,
  seq             bigint NOT NULL,
  model           text COLLATE "C" NOT NULL,
  vector          real[] NOT NULL,
  norm            double precision NOT NULL,
  PRIMARY KEY (tenant_id, user_id, conversation_id, seq, model),
  FOREIGN KEY (tenant_id, user_id, conversation_id, seq) REFERENCES messages (tenant_id, user_id, conversation_id, seq)
);

CREATE TABLE facts (
  tenant_id              text COLLATE "C" NOT NULL,
  user_id                text COLLATE "C" NOT NULL,
  position               bigint GENERATED ALWAYS AS IDENTITY,
  id                     text COLLATE "C" NOT NULL,
  subject                text NOT NULL,
  attribute              text NOT NULL,
  value                  text NOT NULL,
  text                   text NOT NULL,
  confidence             double precision NOT NULL,
  valid_from             timestamptz NOT NULL,
  valid_to               timestamptz,
  superseded_by          text COLLATE "C",
  source_conversation_id text COLLATE "C",
  source_seqs            json NOT NULL,
  extractor              text NOT NULL,
  created_at             timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, user_id, position),
  CONSTRAINT facts_id UNIQUE (tenant_id, id)
);

CREATE TABLE entities (
  tenant_id   text COLLATE "C" NOT NULL,
  user_id     text COLLATE "C" NOT NULL,
  position    bigint GENERATED ALWAYS AS IDENTITY,
  id          text COLLATE "C" NOT NULL,
  name        text NOT NULL,
  type        text NOT NULL,
  aliases     json NOT NULL,
  description text,
  created_at  timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, user_id, position),
  CONSTRAINT entities_id UNIQUE (tenant_id, id)
);

CREATE TABLE entity_names (
  tenant_id text COLLATE "C" NOT NULL,
  user_id   text COLLATE "C" NOT NULL,
  name      text COLLATE "C" NOT NULL,
  entity_id text COLLATE "C" NOT NULL,
  PRIMARY KEY (tenant_id, user_id, name)
);

CREATE TABLE relations (
  tenant_id              text COLLATE "C" NOT NULL,
  user_id                text COLLATE "C" NOT NULL,
  position               bigint GENERATED ALWAYS AS IDENTITY,
  id                     text COLLATE "C" NOT NULL,
  subject_id             text COLLATE "C" NOT NULL,
  predicate              text NOT NULL,
  object_id              text COLLATE "C" NOT NULL,
  valid_from             timestamptz NOT NULL,
  valid_to               timestamptz,
  source_conversation_id text COLLATE "C",
  source_seqs            json NOT NULL,
  created_at             timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, user_id, position),
  CONSTRAINT relations_id UNIQUE (tenant_id, id)
);

CREATE INDEX relations_subject ON relations (tenant_id, user_id, subject_id);
CREATE INDEX relations_object ON relations (tenant_id, user_id, object_id);

CREATE TABLE cursors (
  tenant_id       text COLLATE "C" NOT NULL,
  user_id         text COLLATE "C" NOT NULL,
  conversation_id text COLLATE "C" NOT NULL,
  name            text COLLATE "C" NOT NULL,
  position        bigint NOT NULL,
  PRIMARY KEY (tenant_id, user_id, conversation_id, name)
);
`;

// pgvector, for the vector indexes that come with a later migration. Only where the server has the
// extension and this role may create it: a server without it still runs everything else. Extensions
// belong to the database, not to a schema of ours, so it goes to `public` and outlives a dropped store schema.
const vectorExtension = `
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') THEN
    RETURN;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') THEN
    RAISE NOTICE 'mnemo: the vector extension (pgvector) is not installed on this server; vector recall will need it';
    RETURN;
  END IF;
  CREATE EXTENSION IF NOT EXISTS vector SCHEMA public;
EXCEPTION WHEN insufficient_privilege THEN
  RAISE NOTICE 'mnemo: this role may not create the vector extension; a superuser can run CREATE EXTENSION vector';
END
$$;
`;

// The caller's JSON object about a conversation (Store.updateConversationMetadata); NULL until set, so rows
// written before this step read `metadata: undefined`. jsonb, unlike the message columns: it is one small
// object per conversation that later queries may filter on (`metadata->>'memory_type'`), and no caller
// needs its text back byte for byte. jsonb holds no NUL character, which core's check refuses on every store.
const conversationMetadataSchema = `
ALTER TABLE conversations ADD COLUMN metadata jsonb;
`;

// Erasure of single messages (Store.eraseMessages): a conversation counts its erased messages (their seqs
// are never given again: message_count stays the last seq, and keyword copies in memory read a user
// afresh when the count moves); the audit log keeps each erasure's selection and counts, never content.
const erasureSchema = `
ALTER TABLE conversations ADD COLUMN erased_messages bigint NOT NULL DEFAULT 0;

CREATE TABLE erasures (
  position  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id        text COLLATE "C" NOT NULL UNIQUE,
  tenant_id text COLLATE "C" NOT NULL,
  user_id   text COLLATE "C" NOT NULL,
  selection jsonb NOT NULL,
  counts    jsonb NOT NULL,
  erased_at timestamptz NOT NULL
);

CREATE INDEX erasures_user ON erasures (tenant_id, user_id);
`;

// Facts that expire (issue 26): past expires_at a fact leaves current listings and contexts but stays in
// its history.
const factExpirySchema = `
ALTER TABLE facts ADD COLUMN expires_at timestamptz;
`;

/** The schema's steps in order; the schema records each one applied in its `mnemo_migrations` table. */
export const postgresMigrations: readonly PostgresMigration[] = Object.freeze([
  Object.freeze({
    version: 1,
    name: 'conversations, messages, usage ledger, summaries, jobs and memory files',
    sql: initialSchema,
  }),
  Object.freeze({ version: 2, name: 'keyword and vector search, facts, entity graph, cursors', sql: knowledgeSchema }),
  Object.freeze({ version: 3, name: 'the vector extension, where the server has it', sql: vectorExtension }),
  Object.freeze({
    version: 4,
    name: 'keyword index (GIN), BM25 corpus statistics, registry of pgvector tables',
    sql: postgresSearchMigrationSql,
  }),
  Object.freeze({ version: 5, name: 'conversation metadata', sql: conversationMetadataSchema }),
  Object.freeze({
    version: 6,
    name: 'per-user document frequencies of lexemes, for keyword search pruning',
    sql: postgresKeywordTermsMigrationSql,
  }),
  Object.freeze({ version: 7, name: 'message erasure and its audit log', sql: erasureSchema }),
  Object.freeze({ version: 8, name: 'fact expiry', sql: factExpirySchema }),
]);

/** What {@link migratePostgresSchema} did: the version found, the version left, and the steps it ran. */
export interface PostgresMigrationResult {
  readonly fromVersion: number;
  readonly toVersion: number;
  readonly applied: readonly number[];
}

/** Options of {@link migratePostgresSchema}. */
export interface PostgresMigrateOptions {
  /** Schema holding the store's tables, created if missing; default `mnemo`. */
  readonly schema?: string;
  /** Steps to apply; default {@link postgresMigrations}. Versions must run 1, 2, 3, … without gaps. */
  readonly migrations?: readonly PostgresMigration[];
}

/** Key of the transaction-level advisory lock every migrator (and every creator of a vector table) takes: "mnem" as a 32-bit integer, then 1. */
// One lock for the whole database, not per schema: steps may touch database-wide objects (extensions).
export const postgresMigrationLockKey = [0x6d6e656d, 1] as const;

/**
 * Brings a schema up to the newest version this code knows, in one transaction holding a database-wide
 * advisory lock (`pg_advisory_xact_lock`), so replicas that start together migrate it exactly once: the
 * others wait, then find nothing to do. Throws `storage_failed` for a schema written by a newer version
 * (left untouched) and for any failed step (rolled back whole, the driver error as `cause`); `unavailable`
 * when the lock wait outlasts the statement timeout.
 */
export async function migratePostgresSchema(
  pool: PostgresPool,
  options: PostgresMigrateOptions = {},
): Promise<PostgresMigrationResult> {
  const schema = options.schema ?? defaultPostgresSchema;
  const tables = postgresTables(schema);
  const migrations = options.migrations ?? postgresMigrations;
  const latest = checkMigrationOrder(migrations);
  try {
    return await runInTransaction(pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1, $2)', postgresMigrationLockKey);
      const exists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
      // Only when missing: CREATE SCHEMA checks the CREATE privilege on the database even with IF NOT
      // EXISTS, and a role given a schema by its DBA may not have it.
      if (exists.rowCount === 0) await client.query(`CREATE SCHEMA "${schema}"`);
      await client.query(`CREATE TABLE IF NOT EXISTS ${tables.migrations} (
        version    integer PRIMARY KEY,
        name       text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
      const fromVersion = await readPostgresSchemaVersion(client, schema);
      assertKnownVersion(schema, fromVersion, latest);
      const pending = migrations.filter((migration) => migration.version > fromVersion);
      if (pending.length > 0) await client.query(`SET LOCAL search_path TO "${schema}"`);
      for (const migration of pending) {
        await client.query(migration.sql);
        await client.query(`INSERT INTO ${tables.migrations} (version, name) VALUES ($1, $2)`, [
          migration.version,
          migration.name,
        ]);
      }
      return { fromVersion, toVersion: latest, applied: pending.map((migration) => migration.version) };
    });
  } catch (error) {
    throw toPostgresError(error, `migrating schema "${schema}" to version ${latest}`);
  }
}

/** The newest version recorded in the schema's `mnemo_migrations` table; 0 when the schema or the table does not exist. */
export async function readPostgresSchemaVersion(
  queryable: PostgresQueryable,
  schema: string = defaultPostgresSchema,
): Promise<number> {
  const tables = postgresTables(schema);
  const found = await queryable.query<{ present: boolean }>('SELECT to_regclass($1) IS NOT NULL AS present', [
    tables.migrations,
  ]);
  if (found.rows[0]?.present !== true) return 0;
  const result = await queryable.query<{ version: number | string }>(
    `SELECT coalesce(max(version), 0) AS version FROM ${tables.migrations}`,
  );
  return Number(result.rows[0]?.version ?? 0);
}

function assertKnownVersion(schema: string, version: number, latest: number): void {
  if (version <= latest) return;
  throw new MemoryError(
    'storage_failed',
    `schema "${schema}" has version ${version}, newer than version ${latest} that this @mnemo/postgres knows; upgrade mnemo to open it`,
    { details: { schema, schemaVersion: version, supportedVersion: latest } },
  );
}

function checkMigrationOrder(migrations: readonly PostgresMigration[]): number {
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
