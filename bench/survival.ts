// Fact-survival benchmark: ten concrete facts planted in the first turns of a 500-turn mesh chat;
// after replaying it under the summary policy, which of them does the final context still hold, and
// what did the compactions that kept them cost? Two fact sets: the tuning set (constants are chosen on
// it) and a held-out one (other kinds, turns and generator seed; it only reports). Run: npm run bench:survival.
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { generateMeshChat } from '../examples/generate-mesh-chat.js';
import { createCompactionVariants } from './compaction-variants.js';
import { formatSurvivalTables } from './format-survival-table.js';
import {
  heldOutFacts,
  heldOutMeshSeed,
  plantedFacts,
  plantedReply,
  plantFacts,
  type PlantedFact,
} from './plant-facts.js';
import { replayFactSurvival, type SurvivalResult } from './replay-fact-survival.js';
import type { ReplaySettings } from './replay-token-costs.js';

const factSets: readonly { name: string; seed: number; facts: readonly PlantedFact[] }[] = [
  { name: 'tuning set', seed: 7, facts: plantedFacts },
  { name: 'held-out set', seed: heldOutMeshSeed, facts: heldOutFacts },
];
const systemPrompt =
  'You are a mesh-radio assistant. Answer in at most 150 characters, plain text, metric units, no emoji.';
const resultsPath = fileURLToPath(new URL('./results/survival.json', import.meta.url));

const { values } = parseArgs({
  options: {
    turns: { type: 'string', default: '500' },
    'max-tokens': { type: 'string', default: '1000' },
    json: { type: 'boolean', default: false },
  },
});
const turns = Number(values.turns);
const maxTokens = Number(values['max-tokens']);
if (!Number.isInteger(turns) || turns < 30 || !Number.isInteger(maxTokens) || maxTokens < 1) {
  console.error('--turns must be an integer ≥ 30 and --max-tokens a positive integer');
  process.exit(2);
}
const settings: ReplaySettings = { maxTokens, windowTurns: 4, system: systemPrompt };

const sets: {
  name: string;
  seed: number;
  messages: number;
  facts: readonly PlantedFact[];
  results: SurvivalResult[];
}[] = [];
for (const set of factSets) {
  // The generator writes turns − 10 exchanges; the ten planted ones make `turns` user turns in all.
  const generated = generateMeshChat({ messages: 2 * (turns - set.facts.length), seed: set.seed });
  const chat = plantFacts(generated, set.facts);
  const results: SurvivalResult[] = [];
  for (const variant of createCompactionVariants(settings.maxTokens))
    results.push(await replayFactSurvival(chat, set.facts, settings, variant));
  sets.push({ ...set, messages: chat.length, results });
}

const report = {
  benchmark: 'survival',
  createdAt: new Date().toISOString(),
  settings: {
    turns,
    maxTokens,
    system: systemPrompt,
    summarizer: 'extractive@1 (offline); prompt tokens are what an LLM summarizer would have been sent',
    plantedReply,
  },
  sets,
};
await mkdir(new URL('./results/', import.meta.url), { recursive: true });
await writeFile(resultsPath, `${JSON.stringify(report, null, 2)}\n`);

if (values.json) {
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
} else {
  for (const set of sets) {
    const lastTurn = Math.max(...set.facts.map((fact) => fact.turn));
    console.log(
      `fact survival, ${set.name} · ${set.facts.length} facts planted in the first ${lastTurn} of ${turns} turns (${set.messages} messages, generator seed ${set.seed}) · ` +
        `summary policy, budget ${maxTokens} tokens, offline extractive summarizer, compaction drained between turns\n`,
    );
    console.log(`${formatSurvivalTables(set.results)}\n`);
  }
  console.log(
    '\nkept = the planted value is an exact substring of the final context (the last request of the replay): in the summary block or a recent message.',
  );
  console.log(
    'asked = at the end the user asks one question per fact ("when is my license renewal due?"): the context built for that question',
  );
  console.log(
    'under hybrid (the library default: facts, summary, recall for the question, recent turns; keyword recall, no embedder) or summary carries the value.',
  );
  console.log(
    'summary = tokens of the latest summary; block = with its header line, as sent. calls = summarizer calls, each writing one summary version;',
  );
  console.log(
    '(condense) = of those, condensations of an over-full summary into the next level. prompt in = the LLM prompt per call (instructions,',
  );
  console.log('previous summary, new messages); output = the summary it returned.');
  console.log('settings:');
  for (const result of sets[0]!.results) console.log(`  ${result.variant.padEnd(24)} ${result.description}`);
  console.log(`\nJSON: ${resultsPath}`);
}
