import type { SqliteDatabase } from './sqlite-driver.js';
import type { SqliteMigration } from './sqlite-migrations.js';
import { vectorCodesTable } from './sqlite-vector-codes-migration.js';
import { signCode } from '@mnemo/core/store-kit';
import { blobVector, vectorBlob } from './sqlite-vector-codes.js';

// Every vector in one plain table (decision 0025): its message, owner and time, its sign code and its
// float32 blob. `id` grows with every insert and is never reused (AUTOINCREMENT), so a process that has
// read a user's codes up to some id reads only the newer rows next time; a deletion is counted per user
// and model in `vector_deletions` by a trigger, which tells a process that its copy is stale. Erasing a
// user removes their counts (no row names an erased user) and counts an erasure in `vector_erasures`,
// which makes every copy stale. The covering
// index `message_vectors_codes` lets a process read a user's codes without touching the float blobs.
const vectorTableSchema = `
CREATE TABLE message_vectors (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  model_id        INTEGER NOT NULL REFERENCES embedding_models (id),
  message_rowid   INTEGER NOT NULL,
  tenant_id       TEXT    NOT NULL,
  user_id         TEXT    NOT NULL,
  conversation_id TEXT    NOT NULL,
  created_at      INTEGER NOT NULL,
  code            BLOB    NOT NULL,
  vector          BLOB    NOT NULL,
  UNIQUE (model_id, message_rowid)
) STRICT;

CREATE INDEX message_vectors_owner ON message_vectors (tenant_id, user_id, conversation_id, model_id);
CREATE INDEX message_vectors_codes ON message_vectors (tenant_id, user_id, model_id, id, message_rowid, conversation_id, created_at, code);

CREATE TABLE vector_deletions (
  model_id  INTEGER NOT NULL,
  tenant_id TEXT    NOT NULL,
  user_id   TEXT    NOT NULL,
  deletions INTEGER NOT NULL,
  PRIMARY KEY (model_id, tenant_id, user_id)
) STRICT, WITHOUT ROWID;

-- Erasing a user removes their counts; the erasures counted here then tell every process to read its copies afresh.
CREATE TABLE vector_erasures (
  id        INTEGER PRIMARY KEY CHECK (id = 1),
  erasures  INTEGER NOT NULL
) STRICT;
INSERT INTO vector_erasures (id, erasures) VALUES (1, 0);

CREATE TRIGGER message_vectors_deleted AFTER DELETE ON message_vectors BEGIN
  INSERT INTO vector_deletions (model_id, tenant_id, user_id, deletions) VALUES (old.model_id, old.tenant_id, old.user_id, 1)
    ON CONFLICT (model_id, tenant_id, user_id) DO UPDATE SET deletions = deletions + 1;
END;
`;

/**
 * Step 7 of the SQLite schema: each model's sqlite-vec table of step 6 (`vector_codes_<id>`) and the
 * `message_embeddings` registry move into `message_vectors`, the codes computed afresh from the floats, in
 * the migration's transaction; the old tables are dropped. Needs sqlite-vec loaded to read them.
 */
export const vectorTableStep: SqliteMigration = Object.freeze({
  version: 7,
  name: 'vectors in a plain table',
  sql: vectorTableSchema,
  apply(database: SqliteDatabase): void {
    const models = database.prepare('SELECT id FROM embedding_models ORDER BY id').all() as { id: number }[];
    const insert = database.prepare(
      `INSERT INTO message_vectors (model_id, message_rowid, tenant_id, user_id, conversation_id, created_at, code, vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    for (const { id } of models) {
      const rows = database
        .prepare(`SELECT rowid, tenant_id, user_id, conversation_id, created_at, vector FROM ${vectorCodesTable(id)}`)
        .raw(true)
        .all() as [number, string, string, string, number, Uint8Array][];
      for (const [messageRowid, tenantId, userId, conversationId, createdAt, blob] of rows) {
        insert.run(
          id,
          messageRowid,
          tenantId,
          userId,
          conversationId,
          createdAt,
          vectorBlob(signCode(blobVector(blob))),
          blob,
        );
      }
      database.exec(`DROP TABLE ${vectorCodesTable(id)}`);
    }
    database.exec('DROP TABLE message_embeddings');
  },
});
