// Vector search on sqlite-vec, binary-quantized (docs/decisions/0020-vector-and-keyword-search-at-scale.md):
// one vec0 table per model, `vector_codes_<id>`, partitioned by tenant and user, with conversation and time
// as metadata for filters, the sign bits of each vector as the searched column and the float32 vector as
// an auxiliary column. A search takes the nearest codes by Hamming distance, a few times more than asked,
// and ranks those candidates by exact cosine distance on their float vectors.

/** How many Hamming candidates a vector search takes per hit asked for, before the exact cosine rescoring. */
export const binaryCandidatesPerHit = 2;

/** Most rows one vec0 KNN query returns (sqlite-vec's limit). */
const maxKnnRows = 4096;

/** The vec0 table holding the codes and vectors of embedding model `id`. */
export function vectorCodesTable(id: number): string {
  return `vector_codes_${Number(id)}`;
}

/** Bits of a model's codes: its dimensions rounded up to a whole byte (sqlite-vec's `bit[N]` needs N divisible by 8). */
export function codeBits(dimensions: number): number {
  return Math.ceil(dimensions / 8) * 8;
}

/** `CREATE VIRTUAL TABLE` of {@link vectorCodesTable} for a model with `dimensions`. */
export function createVectorCodesTableSql(id: number, dimensions: number): string {
  return `CREATE VIRTUAL TABLE ${vectorCodesTable(id)} USING vec0(tenant_id text partition key, user_id text partition key,
    conversation_id text, created_at integer, embedding bit[${codeBits(dimensions)}], +vector blob)`;
}

/**
 * SQL that turns a float32 vector blob of `dimensions` floats into its code, sqlite-vec's
 * `vec_quantize_binary` (bit set where the value is > 0) over the vector padded with zeros to whole bytes.
 */
export function quantizeSql(expression: string, dimensions: number): string {
  const padding = codeBits(dimensions) - dimensions;
  if (padding === 0) return `vec_quantize_binary(${expression})`;
  return `vec_quantize_binary(vec_f32(unhex(hex(${expression}) || '${'0'.repeat(8 * padding)}')))`;
}

/** A float32 vector as the blob sqlite-vec reads. */
export function vectorBlob(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

/** How many Hamming candidates a search for `k` hits takes. */
export function binaryCandidates(k: number): number {
  return Math.min(maxKnnRows, k * binaryCandidatesPerHit);
}
