import { fileURLToPath } from 'node:url';
import { generateMeshChat } from '../examples/generate-mesh-chat.js';
import { seedRollingSettings } from './compaction-variants.js';
import { loadLocomoConversation } from './load-locomo-conversation.js';
import { plantedFacts, plantFacts } from './plant-facts.js';
import { replayCompactionCosts } from './replay-compaction-costs.js';
import { replayFactSurvival } from './replay-fact-survival.js';
const system = 'You are a mesh-radio assistant. Answer in at most 150 characters, plain text, metric units, no emoji.';
const settings = { maxTokens: Number(process.env.BUDGET ?? 1000), windowTurns: 4, system };
const variants = [{ name: 'seed', settings: seedRollingSettings, description: '' }, ...process.argv.slice(2).map((text, i) => ({ name: `v${i}`, settings: JSON.parse(text), description: '' }))];
const mesh = generateMeshChat({ messages: 2000, seed: 7 });
const locomo = (await loadLocomoConversation(fileURLToPath(new URL('../../shared/data/locomo/locomo10.json', import.meta.url))))!;
const chat = plantFacts(generateMeshChat({ messages: 980, seed: 7 }), plantedFacts);
for (const variant of variants) {
  const line: string[] = [variant.name.padEnd(5)];
  for (const [name, conversation, sizes] of [['mesh', mesh, [20, 30, 50, 100, 500, 2000]], ['locomo', locomo.messages, [20, 30, 50, 100, 419]]] as const) {
    const series = await replayCompactionCosts(conversation, sizes as unknown as number[], settings, variant);
    line.push(`${name} req ${series.rows.map((row) => row.sentTokensPerRequest).join('/')} cum50 ${(() => { const r = series.rows.find((row) => row.messages === 50)!; return Math.round(r.totalSentTokens + r.summarizerInputTokens + r.summarizerOutputTokens); })()}`);
  }
  const survival = await replayFactSurvival(chat, plantedFacts, settings, variant);
  line.push(`facts ${survival.keptCount} final ${survival.finalSentTokens} calls ${survival.compactions}`);
  console.log(line.join(' | '));
}
