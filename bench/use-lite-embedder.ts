// Times the bundled USE-lite model: load, first pass, and ms per sentence at batch sizes 1, 16 and 64.
// Run: npm run bench:use-lite (prints a Markdown table; numbers depend on the machine).
import { cpus } from 'node:os';
import { UseLiteEmbedder } from '@mnemo/models';

const subjects = [
  'my battery',
  'the relay on the ridge',
  'our trip to Lisbon',
  'the new radio',
  'my sister Ana',
  'the spare antenna',
];
const complaints = [
  'is almost empty again',
  'needs a firmware update before Friday',
  'was moved to the second week of June',
  'keeps dropping packets at night',
];
// Ten-ish words each, like chat messages; distinct so no cache could help.
const sentences = Array.from(
  { length: 256 },
  (_, index) => `${subjects[index % subjects.length]} ${complaints[index % complaints.length]} (note ${index})`,
);

async function time(run: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await run();
  return performance.now() - start;
}

const embedder = new UseLiteEmbedder({ batchSize: 64 });
const loadMs = await time(() => embedder.load());
const firstMs = await time(() => embedder.embed([sentences[0]!]));

const rows: string[] = [];
for (const batchSize of [1, 16, 64]) {
  const sized = new UseLiteEmbedder({ batchSize });
  const count = batchSize === 1 ? 64 : 256;
  await sized.embed(sentences.slice(0, batchSize)); // warm-up pass at this shape
  const elapsed = await time(() => sized.embed(sentences.slice(0, count)));
  rows.push(`| ${batchSize} | ${count} | ${(elapsed / count).toFixed(2)} | ${Math.round((count * 1000) / elapsed)} |`);
}

console.log(`USE-lite (${embedder.model}) on ${cpus().length} cores, Node ${process.version}`);
console.log(`load (import + weights): ${loadMs.toFixed(0)} ms; first forward pass: ${firstMs.toFixed(0)} ms\n`);
console.log('| batch size | sentences | ms / sentence | sentences / s |');
console.log('| ---: | ---: | ---: | ---: |');
for (const row of rows) console.log(row);
