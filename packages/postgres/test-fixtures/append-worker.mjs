// Child process of postgres-multiprocess.test.ts: appends COUNT messages to one conversation through the
// BUILT @mnemo/postgres, retrying some appends as a client that lost the response would, and reports
// every id and seq the store returned. Usage: node append-worker.mjs URL SCHEMA WRITER_ID COUNT
import { createPostgresStore } from '@mnemo/postgres';

const [url, schema, writerId, countText] = process.argv.slice(2);
const count = Number(countText);
const scope = { tenantId: 'tenant-mp', userId: 'user-mp', conversationId: 'shared' };

/** @param {string} key */
function newMessage(key) {
  return {
    role: 'user',
    content: key,
    name: undefined,
    toolCalls: undefined,
    toolCallId: undefined,
    createdAt: new Date().toISOString(),
    metadata: { writer: writerId },
    idempotencyKey: key,
    tokens: key.length,
  };
}

const go = new Promise((resolve) => process.once('message', resolve));
// Two connections per process: appends of one process also race each other, not only other processes.
const store = await createPostgresStore({ connectionString: url, schema, poolMax: 2 });
process.send({ type: 'ready' });
await go;

/** @type {{ key: string, id: string, seq: number }[]} */
const appended = [];
const retried = [];
// Two appenders inside the process, each with its half of the keys, in order.
/**
 * @param {number} first
 * @param {number} step
 */
async function appendRange(first, step) {
  for (let index = first; index < count; index += step) {
    const key = `w${writerId}-${String(index).padStart(3, '0')}`;
    const [stored] = await store.appendMessages(scope, [newMessage(key)]);
    appended.push({ key, id: stored.id, seq: stored.seq });
    if (index % 7 === 0) {
      const [again] = await store.appendMessages(scope, [newMessage(key)]);
      retried.push({ key, id: again.id, seq: again.seq });
    }
  }
}
await Promise.all([appendRange(0, 2), appendRange(1, 2)]);
// Replays every tenth key in one batch, as a client re-sending its outbox after a crash.
const replay = appended.filter((entry) => Number(entry.key.slice(-3)) % 10 === 0);
const replayed = await store.appendMessages(
  scope,
  replay.map((entry) => newMessage(entry.key)),
);
retried.push(...replayed.map((message) => ({ key: message.idempotencyKey, id: message.id, seq: message.seq })));
await store.close();
process.send({ type: 'done', appended, retried }, () => process.disconnect());
