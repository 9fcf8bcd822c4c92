import { UseLiteEmbedder } from './use-lite-embedder.js';

// Runs inside a worker thread of `UseLiteThreadEmbedder`: the model loads once per thread, on the first task.
const embedder = new UseLiteEmbedder();

/** The task a thread runs: one batch of texts in, one unit-length vector per text out. */
export default async function embedTexts(texts: readonly string[]): Promise<Float32Array[]> {
  return embedder.embed(texts);
}
