// Vector search on SQLite (docs/decisions/0025-sqlite-vectors-in-a-plain-table.md, after 0020): each vector
// is stored with its sign code (bit i set where coordinate i is > 0; of its projection on 512 directions when
// it has fewer dimensions, decision 0042) in `message_vectors`; a search takes the
// nearest codes by Hamming distance, a few times more than asked, and ranks those candidates by exact cosine
// distance on their float vectors. The codes and their scan are core's (`recall/vector-codes.ts`), kept per
// user in this process's memory (`sqlite-vector-code-index.ts`); the floats are read for the candidates only.

import type { SqliteDatabase } from './sqlite-driver.js';

/** A float32 vector as the blob stored in `message_vectors.vector` (and a code as `code`). */
export function vectorBlob(vector: Float32Array | Uint32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

/** A stored float32 blob as a vector (copied when the blob is not 4-byte aligned). */
export function blobVector(blob: Uint8Array): Float32Array {
  if (blob.byteOffset % 4 === 0) return new Float32Array(blob.buffer, blob.byteOffset, blob.byteLength / 4);
  return new Float32Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength));
}

/** The models that have vectors here, by id: what a migration of the vectors walks through. */
export function registeredModels(database: SqliteDatabase): { id: number; dimensions: number }[] {
  return database.prepare('SELECT id, dimensions FROM embedding_models ORDER BY id').all() as {
    id: number;
    dimensions: number;
  }[];
}
