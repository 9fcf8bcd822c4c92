// Step 6 of the PostgreSQL schema: per-user document frequencies of lexemes, for keyword search's top-k
// pruning (postgres-pruned-keyword-search.ts). Kept apart from the released steps in postgres-migrations.ts.

/**
 * SQL of migration 6, run with `search_path` set to the store's schema:
 *
 * - `keyword_terms`: for each tenant, user and lexeme, how many of the user's messages hold it (BM25's
 *   document frequency), and, over those messages, the most positions it has in one (`max_frequency`) and
 *   the fewest lexemes one has (`min_length`): together they bound what the lexeme can add to a message's
 *   score. Backfilled from the stored messages. Deletes lower `documents` but leave the two bounds as
 *   they were (still bounds, if looser).
 * - Two statement-level triggers on `messages` keep it in step with every insert and delete (appends,
 *   `mnemo copy`, erase), in the writing transaction: the counts a search reads are those of its snapshot.
 *   Each statement adds its counts in lexeme order, so concurrent appends of one user queue on the shared
 *   lexemes in the same order and cannot deadlock each other. Rows that reach zero are removed.
 *   The functions keep the migration's `search_path`, so they find the tables whatever the session's is.
 */
export const postgresKeywordTermsMigrationSql = `
SET LOCAL maintenance_work_mem = '256MB';

CREATE TABLE keyword_terms (
  tenant_id text COLLATE "C" NOT NULL,
  user_id   text COLLATE "C" NOT NULL,
  lexeme    text COLLATE "C" NOT NULL,
  documents bigint NOT NULL CHECK (documents >= 0),
  max_frequency integer NOT NULL,
  min_length    integer NOT NULL,
  PRIMARY KEY (tenant_id, user_id, lexeme)
);

INSERT INTO keyword_terms (tenant_id, user_id, lexeme, documents, max_frequency, min_length)
SELECT m.tenant_id, m.user_id, l.lexeme, count(*), max(greatest(cardinality(l.positions), 1)), min(length(m.search_vector))
FROM messages m CROSS JOIN LATERAL unnest(m.search_vector) AS l (lexeme, positions, weights)
GROUP BY 1, 2, 3;

CREATE FUNCTION keyword_terms_count_inserted() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO keyword_terms AS k (tenant_id, user_id, lexeme, documents, max_frequency, min_length)
  SELECT n.tenant_id, n.user_id, l.lexeme, count(*), max(greatest(cardinality(l.positions), 1)), min(length(n.search_vector))
  FROM inserted_messages n CROSS JOIN LATERAL unnest(n.search_vector) AS l (lexeme, positions, weights)
  GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (tenant_id, user_id, lexeme) DO UPDATE SET documents = k.documents + excluded.documents,
    max_frequency = greatest(k.max_frequency, excluded.max_frequency), min_length = least(k.min_length, excluded.min_length);
  RETURN NULL;
END
$$;

CREATE FUNCTION keyword_terms_count_deleted() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  UPDATE keyword_terms k SET documents = greatest(k.documents - r.documents, 0)
  FROM (
    SELECT o.tenant_id, o.user_id, l.lexeme, count(*) AS documents
    FROM deleted_messages o CROSS JOIN LATERAL unnest(tsvector_to_array(o.search_vector)) AS l (lexeme)
    GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ) r
  WHERE k.tenant_id = r.tenant_id AND k.user_id = r.user_id AND k.lexeme = r.lexeme;
  -- A second statement: the update's rows are only visible to the next one.
  DELETE FROM keyword_terms k
  USING (SELECT DISTINCT o.tenant_id, o.user_id, l.lexeme FROM deleted_messages o CROSS JOIN LATERAL unnest(tsvector_to_array(o.search_vector)) AS l (lexeme)) r
  WHERE k.documents = 0 AND k.tenant_id = r.tenant_id AND k.user_id = r.user_id AND k.lexeme = r.lexeme;
  RETURN NULL;
END
$$;

CREATE TRIGGER messages_keyword_terms_insert AFTER INSERT ON messages
  REFERENCING NEW TABLE AS inserted_messages FOR EACH STATEMENT EXECUTE FUNCTION keyword_terms_count_inserted();
CREATE TRIGGER messages_keyword_terms_delete AFTER DELETE ON messages
  REFERENCING OLD TABLE AS deleted_messages FOR EACH STATEMENT EXECUTE FUNCTION keyword_terms_count_deleted();
`;
