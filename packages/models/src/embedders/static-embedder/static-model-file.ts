import { createHash } from 'node:crypto';
import { MemoryError } from '@mnemo/core';
import type { StaticVocabulary } from './static-tokenizer.js';

/** A static embedding model: a token table (one int8 row per token, with a scale) and its vocabulary. */
export interface StaticModel {
  /** Id of the vector space, e.g. `static-use-lite-256@1f3a9c0e` (the last part is the file's SHA-256 prefix). */
  readonly model: string;
  readonly dimensions: number;
  readonly vocabulary: StaticVocabulary;
  /** `rows × dimensions` quantized values, row-major. */
  readonly values: Int8Array;
  /** One scale per row: a row's value `k` is `values[k] * scales[row]`. */
  readonly scales: Float32Array;
  /** Build facts carried in the file (teacher, corpus, licences, settings), for `describe`/docs; free-form. */
  readonly provenance: Readonly<Record<string, unknown>>;
}

interface StaticModelHeader {
  readonly name: string;
  readonly dimensions: number;
  readonly rows: number;
  readonly words: readonly string[];
  readonly pieces: readonly (readonly [string, number])[];
  readonly provenance: Readonly<Record<string, unknown>>;
}

const magic = 'MNEMOST1';

/**
 * Serializes a token table as one file: `MNEMOST1`, a uint32 header length, a JSON header (name,
 * dimensions, vocabulary, provenance), zero padding to 4 bytes, the float32 row scales, then the int8 values.
 */
export function encodeStaticModel(input: {
  name: string;
  vocabulary: StaticVocabulary;
  table: Float32Array;
  dimensions: number;
  provenance: Record<string, unknown>;
}): Buffer {
  const rows = input.vocabulary.words.length + input.vocabulary.pieces.length;
  if (input.table.length !== rows * input.dimensions)
    throw new MemoryError(
      'invalid_input',
      `table has ${input.table.length} values, want ${rows} × ${input.dimensions}`,
    );
  const scales = new Float32Array(rows);
  const values = new Int8Array(rows * input.dimensions);
  for (let row = 0; row < rows; row += 1) {
    let max = 0;
    for (let k = 0; k < input.dimensions; k += 1)
      max = Math.max(max, Math.abs(input.table[row * input.dimensions + k]!));
    const scale = max === 0 ? 1 : max / 127;
    scales[row] = scale;
    for (let k = 0; k < input.dimensions; k += 1)
      values[row * input.dimensions + k] = Math.round(input.table[row * input.dimensions + k]! / scale);
  }
  const header: StaticModelHeader = {
    name: input.name,
    dimensions: input.dimensions,
    rows,
    words: input.vocabulary.words,
    pieces: input.vocabulary.pieces,
    provenance: input.provenance,
  };
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const headerEnd = magic.length + 4 + json.length;
  const padding = (4 - (headerEnd % 4)) % 4;
  const lengthField = Buffer.alloc(4);
  lengthField.writeUInt32LE(json.length);
  return Buffer.concat([
    Buffer.from(magic, 'latin1'),
    lengthField,
    json,
    Buffer.alloc(padding),
    Buffer.from(scales.buffer),
    Buffer.from(values.buffer),
  ]);
}

/** The SHA-256 of a model file, in hex. */
export function staticModelChecksum(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Reads a file written by {@link encodeStaticModel}. With `expectedSha256`, a file whose checksum
 * differs is refused. `model_failed` for a file that is not a static model, is truncated or fails the checksum.
 */
export function decodeStaticModel(bytes: Buffer, options: { expectedSha256?: string } = {}): StaticModel {
  const checksum = staticModelChecksum(bytes);
  if (options.expectedSha256 !== undefined && checksum !== options.expectedSha256) {
    throw new MemoryError(
      'model_failed',
      `static embedder file has SHA-256 ${checksum}, want ${options.expectedSha256} (a damaged or foreign file)`,
    );
  }
  if (bytes.length < magic.length + 4 || bytes.toString('latin1', 0, magic.length) !== magic)
    throw new MemoryError('model_failed', 'not a static embedder file (bad magic)');
  const headerLength = bytes.readUInt32LE(magic.length);
  const headerEnd = magic.length + 4 + headerLength;
  let header: StaticModelHeader;
  try {
    header = JSON.parse(bytes.toString('utf8', magic.length + 4, headerEnd)) as StaticModelHeader;
  } catch (error) {
    throw new MemoryError('model_failed', 'static embedder file has an unreadable header', { cause: error });
  }
  const { rows, dimensions } = header;
  const scalesStart = headerEnd + ((4 - (headerEnd % 4)) % 4);
  const valuesStart = scalesStart + rows * 4;
  if (rows !== header.words.length + header.pieces.length || bytes.length !== valuesStart + rows * dimensions) {
    throw new MemoryError(
      'model_failed',
      `static embedder file is truncated or inconsistent (${bytes.length} bytes for ${rows} rows of ${dimensions})`,
    );
  }
  // Copies, so the table is aligned whatever the buffer's offset in its pool.
  const scales = new Float32Array(bytes.buffer.slice(bytes.byteOffset + scalesStart, bytes.byteOffset + valuesStart));
  const values = new Int8Array(bytes.buffer.slice(bytes.byteOffset + valuesStart, bytes.byteOffset + bytes.length));
  return {
    model: `${header.name}@${checksum.slice(0, 8)}`,
    dimensions,
    vocabulary: { words: header.words, pieces: header.pieces },
    values,
    scales,
    provenance: header.provenance,
  };
}
