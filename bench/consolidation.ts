// npm run bench:consolidation — what the fact consolidation pass (issue 26) does to the facts the
// offline extractor stores, on the chats we have:
//   - the planted-fact sets of bench:survival (tuning: seed 7; held out: seed 11), 500 user turns each:
//     every planted value must still be a current fact after consolidation;
//   - the bundled mesh-radio example with the user's relay switch appended: the new relay current;
//   - the generated user–assistant chats (bench/generate-assistant-chats.ts: facts that change over time);
//   - LoCoMo's ten conversations (read from ../shared, never copied; skipped when absent).
// Each chat is appended to an in-memory store and extracted with consolidation off, then one
// consolidateFacts pass runs; the table gives current facts before and after, duplicates merged,
// contradictions settled, and planted values present before and after. Table on stdout, JSON beside it.
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createMemory, type Fact, type MessageInput } from '@mnemo/core';
import { consolidateFacts } from '@mnemo/core/internals';
import { InMemoryStore } from '@mnemo/core/testing';
import { parseLocomoConversation, readLocomoSamples } from 'mnemo/locomo';
import { generateMeshChat } from '../examples/generate-mesh-chat.js';
import { formatTable } from '../packages/cli/dist/output/format-table.js';
import { generateAssistantChats } from './generate-assistant-chats.js';
import { heldOutFacts, heldOutMeshSeed, plantedFacts, plantFacts, type PlantedFact } from './plant-facts.js';

const { values } = parseArgs({
  options: {
    locomo: {
      type: 'string',
      default: fileURLToPath(new URL('../../shared/data/locomo/locomo10.json', import.meta.url)),
    },
    json: { type: 'boolean', default: false },
  },
});
const resultsPath = fileURLToPath(new URL('./results/consolidation.json', import.meta.url));

interface Chat {
  readonly name: string;
  readonly messages: readonly MessageInput[];
  readonly planted?: readonly PlantedFact[];
}

interface Row {
  readonly dataset: string;
  readonly chats: number;
  readonly messages: number;
  readonly factsBefore: number;
  /** Facts that extraction itself ended with a successor (a change the user stated). */
  readonly supersededByExtraction: number;
  readonly factsAfter: number;
  readonly merged: number;
  readonly settled: number;
  readonly plantedBefore?: number;
  readonly plantedAfter?: number;
  readonly planted?: number;
  readonly examples: string[];
}

/** Extracts a chat's facts with consolidation off, then runs one pass; returns the counts and a few merges and settlements. */
async function consolidateChat(chat: Chat): Promise<Omit<Row, 'dataset' | 'chats'>> {
  const store = new InMemoryStore();
  const memory = createMemory({
    store,
    worker: { autoStart: false },
    knowledge: { consolidate: false },
    compaction: false,
  });
  const user = { tenantId: 'default', userId: chat.name };
  try {
    for (let start = 0; start < chat.messages.length; start += 500) {
      await memory.append({ userId: chat.name, conversationId: chat.name }, chat.messages.slice(start, start + 500));
    }
    await memory.runPendingJobs();
    const before = await memory.facts.list(user);
    const supersededByExtraction = (await memory.facts.history(user)).filter(
      (fact) => fact.supersededBy !== undefined,
    ).length;
    const result = await consolidateFacts(store, user, new Date().toISOString());
    const after = await memory.facts.list(user);
    const holds = (facts: readonly Fact[], value: string) =>
      facts.some((fact) => fact.value.includes(value) || fact.text.includes(value));
    const planted = chat.planted ?? [];
    return {
      messages: chat.messages.length,
      factsBefore: before.length,
      supersededByExtraction,
      factsAfter: after.length,
      merged: result.merged.length,
      settled: result.settled.length,
      ...(planted.length === 0
        ? {}
        : {
            planted: planted.length,
            plantedBefore: planted.filter((fact) => holds(before, fact.value)).length,
            plantedAfter: planted.filter((fact) => holds(after, fact.value)).length,
          }),
      examples: [
        ...result.merged.map(
          ({ duplicate, into }) => `merged ${duplicate.attribute}: "${duplicate.value}" → "${into.value}"`,
        ),
        ...result.settled.map(({ older, newer }) => `settled ${older.attribute}: "${older.value}" → "${newer.value}"`),
      ],
    };
  } finally {
    await memory.close();
  }
}

function locomoChats(text: string, source: string): Chat[] {
  return readLocomoSamples(text, source).map((raw, index) => {
    const conversation = parseLocomoConversation(raw, { source, text, index });
    return {
      name: conversation.sampleId,
      messages: conversation.turns.map((turn) => ({
        role: turn.role,
        content: turn.content,
        ...(turn.createdAt === undefined ? {} : { createdAt: turn.createdAt }),
      })),
    };
  });
}

function readOptional(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

const meshExample = readFileSync(fileURLToPath(new URL('../examples/mesh-radio-node-7.jsonl', import.meta.url)), 'utf8')
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line) as MessageInput);
const relaySwitch: MessageInput[] = [
  {
    role: 'user',
    content: 'update: I switched my main relay to BEAR-CREEK on Bear Butte, id !77aa0012',
    createdAt: '2025-06-20T10:00:00Z',
  },
  { role: 'assistant', content: 'Noted: BEAR-CREEK is your main relay now.', createdAt: '2025-06-20T10:00:30Z' },
];
const assistantText = JSON.stringify(generateAssistantChats());
const locomoText = readOptional(values.locomo);
const datasets: { name: string; chats: Chat[] }[] = [
  {
    name: 'planted facts, tuning set',
    chats: [
      {
        name: 'tuning',
        messages: plantFacts(generateMeshChat({ messages: 2 * 490, seed: 7 }), plantedFacts),
        planted: plantedFacts,
      },
    ],
  },
  {
    name: 'planted facts, held-out set',
    chats: [
      {
        name: 'held-out',
        messages: plantFacts(generateMeshChat({ messages: 2 * 490, seed: heldOutMeshSeed }), heldOutFacts),
        planted: heldOutFacts,
      },
    ],
  },
  {
    name: 'mesh-radio example + relay switch',
    chats: [{ name: 'node-7', messages: [...meshExample, ...relaySwitch] }],
  },
  { name: 'generated user–assistant chats', chats: locomoChats(assistantText, 'assistant-chats.json') },
  ...(locomoText === undefined ? [] : [{ name: 'LoCoMo', chats: locomoChats(locomoText, 'locomo10.json') }]),
];

const rows: Row[] = [];
for (const dataset of datasets) {
  const results: Awaited<ReturnType<typeof consolidateChat>>[] = [];
  for (const chat of dataset.chats) results.push(await consolidateChat(chat));
  const sum = (pick: (result: (typeof results)[number]) => number | undefined) =>
    results.reduce((total, result) => total + (pick(result) ?? 0), 0);
  const hasPlanted = results.some((result) => result.planted !== undefined);
  rows.push({
    dataset: dataset.name,
    chats: results.length,
    messages: sum((result) => result.messages),
    factsBefore: sum((result) => result.factsBefore),
    supersededByExtraction: sum((result) => result.supersededByExtraction),
    factsAfter: sum((result) => result.factsAfter),
    merged: sum((result) => result.merged),
    settled: sum((result) => result.settled),
    ...(hasPlanted
      ? {
          planted: sum((result) => result.planted),
          plantedBefore: sum((result) => result.plantedBefore),
          plantedAfter: sum((result) => result.plantedAfter),
        }
      : {}),
    examples: results.flatMap((result) => result.examples).slice(0, 6),
  });
}
if (locomoText === undefined)
  console.error(`LoCoMo not found at ${values.locomo}: its row is left out (--locomo PATH)`);

await mkdir(new URL('./results/', import.meta.url), { recursive: true });
await writeFile(
  resultsPath,
  `${JSON.stringify({ benchmark: 'consolidation', createdAt: new Date().toISOString(), rows }, null, 2)}\n`,
);
if (values.json) {
  console.log(JSON.stringify(rows));
} else {
  const table = formatTable(
    [
      { header: 'dataset' },
      { header: 'chats', align: 'right' },
      { header: 'messages', align: 'right' },
      { header: 'superseded by extraction', align: 'right' },
      { header: 'current before', align: 'right' },
      { header: 'after', align: 'right' },
      { header: 'merged', align: 'right' },
      { header: 'settled', align: 'right' },
      { header: 'planted kept (before → after)', align: 'right' },
    ],
    rows.map((row) => [
      row.dataset,
      String(row.chats),
      String(row.messages),
      String(row.supersededByExtraction),
      String(row.factsBefore),
      String(row.factsAfter),
      String(row.merged),
      String(row.settled),
      row.planted === undefined ? '' : `${row.plantedBefore}/${row.planted} → ${row.plantedAfter}/${row.planted}`,
    ]),
  );
  console.log(table);
  for (const row of rows) if (row.examples.length > 0) console.log(`\n${row.dataset}:\n  ${row.examples.join('\n  ')}`);
  console.log(`\nJSON: ${resultsPath}`);
}
