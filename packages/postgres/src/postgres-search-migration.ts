// Step 4 of the PostgreSQL schema: the indexes recall needs at scale. Kept apart from the released steps
// in postgres-migrations.ts, which are never edited.

/**
 * SQL of migration 4, run with `search_path` set to the store's schema:
 *
 * - `conversations.search_length`: the sum of the conversation's `length(search_vector)` (distinct
 *   lexemes per message), kept by appends, so BM25's corpus statistics (document count and average
 *   length) are read from a user's conversation rows instead of a scan of their messages.
 * - `messages_search`: a GIN index for `search_vector @@ to_tsquery(…)`. With `btree_gin` (a trusted
 *   extension since PostgreSQL 13: the database owner may create it) the index is
 *   `(tenant_id, user_id, search_vector)`, so tenant and user lead it and one index scan finds one user's
 *   matching messages; without it, `(search_vector)` alone, and the tenant and user are checked on the rows.
 * - `vector_tables`: the registry of pgvector tables, one per (model, dimensions), created on first use by
 *   the store (`vectors_<id>`, an HNSW index on each). It holds no tenant data, only which tables exist.
 *
 * `maintenance_work_mem` is raised for this transaction: index builds over an existing store sort in it.
 */
export const postgresSearchMigrationSql = `
SET LOCAL maintenance_work_mem = '256MB';

ALTER TABLE conversations ADD COLUMN search_length bigint NOT NULL DEFAULT 0;

UPDATE conversations c SET search_length = s.total
FROM (SELECT tenant_id, user_id, conversation_id, sum(length(search_vector)) AS total FROM messages GROUP BY 1, 2, 3) s
WHERE c.tenant_id = s.tenant_id AND c.user_id = s.user_id AND c.conversation_id = s.conversation_id;

DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'btree_gin') THEN
    BEGIN
      -- In public, like vector: an extension belongs to the database and must outlive a dropped store schema.
      CREATE EXTENSION IF NOT EXISTS btree_gin SCHEMA public;
    EXCEPTION WHEN OTHERS THEN
      RAISE NOTICE 'mnemo: btree_gin could not be created (%); the keyword index will not lead with tenant_id and user_id', SQLERRM;
    END;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'btree_gin') THEN
    CREATE INDEX messages_search ON messages USING gin (tenant_id, user_id, search_vector);
  ELSE
    CREATE INDEX messages_search ON messages USING gin (search_vector);
  END IF;
END
$$;

CREATE TABLE vector_tables (
  id         integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  model      text COLLATE "C" NOT NULL,
  dimensions integer NOT NULL CHECK (dimensions > 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (model, dimensions)
);
`;
