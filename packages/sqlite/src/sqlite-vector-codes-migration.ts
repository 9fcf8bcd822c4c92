import type { SqliteDatabase } from './sqlite-driver.js';
import type { SqliteMigration } from './sqlite-migrations.js';
import { registeredModels } from './sqlite-vector-codes.js';

/**
 * Step 6 of the SQLite schema: every model's float `vec0` table (`vectors_<id>`, searched by a scan of the
 * user's whole partition) becomes a binary-quantized one (`vector_codes_<id>`, decision 0020), backfilled
 * from the stored vectors in the migration's transaction; the old table is dropped, so the vectors are
 * stored once. Step 7 (`sqlite-vector-table-migration.ts`) later moves these tables into `message_vectors`.
 * Needs sqlite-vec loaded on the connection (as `openSqliteStore` does).
 */
export const binaryVectorSearchStep: SqliteMigration = Object.freeze({
  version: 6,
  name: 'binary-quantized vector search',
  sql: '',
  apply(database: SqliteDatabase): void {
    const models = registeredModels(database);
    for (const { id, dimensions } of models) {
      database.exec(`CREATE VIRTUAL TABLE ${vectorCodesTable(id)} USING vec0(tenant_id text partition key, user_id text partition key,
        conversation_id text, created_at integer, embedding bit[${codeBits(dimensions)}], +vector blob)`);
      database.exec(
        `INSERT INTO ${vectorCodesTable(id)} (rowid, tenant_id, user_id, conversation_id, created_at, embedding, vector)
         SELECT rowid, tenant_id, user_id, conversation_id, created_at, ${quantizeSql('embedding', dimensions)}, embedding FROM vectors_${Number(id)}`,
      );
      database.exec(`DROP TABLE vectors_${Number(id)}`);
    }
  },
});

/** The vec0 table of step 6 holding the codes and vectors of embedding model `id`. */
export function vectorCodesTable(id: number): string {
  return `vector_codes_${Number(id)}`;
}

// Bits of a model's codes: its dimensions rounded up to a whole byte (sqlite-vec's `bit[N]` needs N divisible by 8).
function codeBits(dimensions: number): number {
  return Math.ceil(dimensions / 8) * 8;
}

// sqlite-vec's `vec_quantize_binary` (bit set where the value is > 0) over the vector padded with zeros to whole bytes.
function quantizeSql(expression: string, dimensions: number): string {
  const padding = codeBits(dimensions) - dimensions;
  if (padding === 0) return `vec_quantize_binary(${expression})`;
  return `vec_quantize_binary(vec_f32(unhex(hex(${expression}) || '${'0'.repeat(8 * padding)}')))`;
}
