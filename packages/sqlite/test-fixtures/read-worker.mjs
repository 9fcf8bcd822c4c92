// Child process of sqlite-multiprocess.test.ts: reads one conversation over and over through the BUILT
// @mnemo/sqlite while other processes append to it, and reports every read that showed a gap, a
// duplicate or fewer messages than an earlier read. Stops when told to, after one last read.
// Usage: node read-worker.mjs PATH
import { createSqliteStore } from '@mnemo/sqlite';

const [path] = process.argv.slice(2);
const scope = { tenantId: 'tenant-mp', userId: 'user-mp', conversationId: 'shared' };

let started = false;
let stopping = false;
const go = new Promise((resolve) => {
  process.on('message', (message) => {
    if (message.type === 'go') started = true;
    if (message.type === 'stop') stopping = true;
    resolve();
  });
});
const store = createSqliteStore({ path, readonly: true });
process.send({ type: 'ready' });
await go;

const violations = [];
const counts = [];
let previousCount = 0;
/** @param {readonly import('@mnemo/core').Message[]} messages */
function check(messages) {
  const seqs = messages.map((message) => message.seq);
  const gapless = seqs.every((seq, index) => seq === index + 1);
  const unique = new Set(messages.map((message) => message.id)).size === messages.length;
  if (!gapless) violations.push({ kind: 'gap', seqs: seqs.slice(0, 500) });
  if (!unique) violations.push({ kind: 'duplicate id', count: messages.length });
  if (messages.length < previousCount) violations.push({ kind: 'shrank', from: previousCount, to: messages.length });
  previousCount = messages.length;
  counts.push(messages.length);
}

while (started && !stopping) {
  check(await store.listMessages(scope));
  // Yields so the 'stop' message can arrive between reads.
  await new Promise((resolve) => setImmediate(resolve));
}
check(await store.listMessages(scope));
await store.close();
process.send(
  { type: 'done', reads: counts.length, finalCount: previousCount, distinctCounts: new Set(counts).size, violations },
  () => process.disconnect(),
);
