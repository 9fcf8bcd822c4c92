import { codeWords, signCode } from '@mnemo/core/store-kit';
import type { SqliteDatabase } from './sqlite-driver.js';
import type { SqliteMigration } from './sqlite-migrations.js';
import { blobVector, registeredModels, vectorBlob } from './sqlite-vector-codes.js';

// Rows recomputed per statement, so the step never holds a whole model's vectors in memory.
const pageRows = 10_000;

/**
 * Step 11 of the SQLite schema: the code of a vector with fewer than 512 dimensions is its projection on
 * 512 fixed directions (`signCode`, `minCodeBits` in core), no longer its own few signs. Every stored code
 * shorter than its model's new length is recomputed from the stored vector; codes of wider models are
 * already their signs and stay. About 55 µs a vector (the static model's 64 dimensions: 512 × 64 multiply-adds).
 */
export const projectedCodesStep: SqliteMigration = Object.freeze({
  version: 11,
  name: 'vector codes of at least 512 bits',
  sql: '',
  apply(database: SqliteDatabase): void {
    const models = registeredModels(database);
    const page = database.prepare(
      'SELECT id, vector FROM message_vectors WHERE model_id = ? AND id > ? AND length(code) < ? ORDER BY id LIMIT ?',
    );
    const update = database.prepare('UPDATE message_vectors SET code = ? WHERE id = ?');
    for (const { id: modelId, dimensions } of models) {
      const bytes = codeWords(dimensions) * 4;
      let after = 0;
      for (;;) {
        const rows = page.raw(true).all(modelId, after, bytes, pageRows) as [number, Uint8Array][];
        for (const [rowId, blob] of rows) update.run(vectorBlob(signCode(blobVector(blob))), rowId);
        if (rows.length < pageRows) break;
        after = rows[rows.length - 1]![0];
      }
    }
  },
});
