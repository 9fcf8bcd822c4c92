// Runs inside a worker thread of `UseLiteThreadEmbedder`: the model loads once per thread, on the first task.
//
// CommonJS on purpose. piscina loads a task file with require() first, and on Node 20.19+ require() of an
// ES module instantiates its whole module graph synchronously. A thread terminated in the middle of that
// (the pool closed right after start: a SIGINT while `serve` starts) aborted the whole process with a V8
// fatal error ("v8::Module::IsGraphAsync must be used on an instantiated module"), seen in CI's
// fresh-clone check. This file needs no ES module to load; it imports the model's with import(), an
// asynchronous load that a terminated thread simply abandons.

interface Embedder {
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

let embedder: Promise<Embedder> | undefined;

/** The task a thread runs: one batch of texts in, one unit-length vector per text out. */
async function embedTexts(texts: readonly string[]): Promise<Float32Array[]> {
  embedder ??= import('./use-lite-embedder.js').then((module) => new module.UseLiteEmbedder());
  return (await embedder).embed(texts);
}

export = embedTexts;
