// The library in ten lines: keep one conversation per radio node, send only what fits the budget.
import { createMemory } from '@mnemo/core';
import { createSqliteStore } from '@mnemo/sqlite';

const memory = createMemory({ store: createSqliteStore({ path: ':memory:' }) });
const node = { conversationId: 'node-!a3f9c2d1' };

await memory.append(node, [
  { role: 'user', content: "I'm Maren, callsign N0CALL. My relay is LARCH-RIDGE." },
  { role: 'assistant', content: 'Noted: relay LARCH-RIDGE.' },
]);
await memory.append(node, { role: 'user', content: "what was that relay's name again?" });

const { messages, report } = await memory.buildContext(node, {
  policy: 'token-window',
  maxTokens: 1000,
  system: 'You answer over a mesh radio: at most 150 characters, metric units, no emoji.',
});
console.log(messages);
console.log(
  `sent ${report.sentTokens} tokens; the full history costs ${report.fullHistoryTokens}; saved ${report.savedPercent}%`,
);
await memory.close();
