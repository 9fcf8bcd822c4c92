import type { SqliteDatabase } from './sqlite-driver.js';
import type { SqliteMigration } from './sqlite-migrations.js';
import { createVectorCodesTableSql, quantizeSql, vectorCodesTable } from './sqlite-vector-codes.js';

/**
 * Step 6 of the SQLite schema: every model's float `vec0` table (`vectors_<id>`, searched by a scan of the
 * user's whole partition) becomes a binary-quantized one (`vector_codes_<id>`, see `sqlite-vector-codes.ts`),
 * backfilled from the stored vectors in the migration's transaction; the old table is dropped, so the
 * vectors are stored once. Needs sqlite-vec loaded on the connection (as `openSqliteStore` does).
 */
export const binaryVectorSearchStep: SqliteMigration = Object.freeze({
  version: 6,
  name: 'binary-quantized vector search',
  sql: '',
  apply(database: SqliteDatabase): void {
    const models = database.prepare('SELECT id, dimensions FROM embedding_models ORDER BY id').all() as { id: number; dimensions: number }[];
    for (const { id, dimensions } of models) {
      database.exec(createVectorCodesTableSql(id, dimensions));
      database.exec(
        `INSERT INTO ${vectorCodesTable(id)} (rowid, tenant_id, user_id, conversation_id, created_at, embedding, vector)
         SELECT rowid, tenant_id, user_id, conversation_id, created_at, ${quantizeSql('embedding', dimensions)}, embedding FROM vectors_${Number(id)}`,
      );
      database.exec(`DROP TABLE vectors_${Number(id)}`);
    }
  },
});
