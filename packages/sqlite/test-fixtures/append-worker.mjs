// Child process of sqlite-multiprocess.test.ts: appends COUNT messages to one conversation through the
// BUILT @mnemo/sqlite, retrying some appends as a client that lost the response would, and reports
// every id and seq the store returned. Usage: node append-worker.mjs PATH WRITER_ID COUNT
import { createSqliteStore } from '@mnemo/sqlite';

const [path, writerId, countText] = process.argv.slice(2);
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
// A long timeout: under four writers a transaction may queue; the test is about correctness, not speed.
const store = createSqliteStore({ path, busyTimeoutMs: 60_000 });
process.send({ type: 'ready' });
await go;

const appended = [];
const retried = [];
for (let index = 0; index < count; index += 1) {
  const key = `w${writerId}-${String(index).padStart(3, '0')}`;
  const [stored] = await store.appendMessages(scope, [newMessage(key)]);
  appended.push({ key, id: stored.id, seq: stored.seq });
  if (index % 7 === 0) {
    const [again] = await store.appendMessages(scope, [newMessage(key)]);
    retried.push({ key, id: again.id, seq: again.seq });
  }
}
// Replays every tenth key in one batch, as a client re-sending its outbox after a crash.
const replay = appended.filter((_, index) => index % 10 === 0);
const replayed = await store.appendMessages(
  scope,
  replay.map((entry) => newMessage(entry.key)),
);
retried.push(...replayed.map((message) => ({ key: message.idempotencyKey, id: message.id, seq: message.seq })));
await store.close();
process.send({ type: 'done', appended, retried }, () => process.disconnect());
