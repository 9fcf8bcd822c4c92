// Child process of sqlite-compaction-process.test.ts: a job worker on the BUILT packages, wired as
// createMemory wires it (createJobWorker running compactConversation, offline extractive summarizer), that records
// the id of every job it runs. It starts polling when told 'go' and, told 'stop', stops and reports the
// jobs it ran and every error its worker saw.
// Usage: node compaction-worker.mjs PATH WORKER_ID SETTINGS_JSON [SUMMARIZE_DELAY_MS]
import { createGptTokenCounter, ExtractiveSummarizer } from '@mnemo/core';
import { compactConversation, createJobWorker } from '@mnemo/core/internals';
import { createSqliteStore } from '@mnemo/sqlite';

const [path, workerId, settingsJson, delayText = '0'] = process.argv.slice(2);
const summarizeDelayMs = Number(delayText);
const tokenCounter = createGptTokenCounter();
const extractive = new ExtractiveSummarizer({ tokenCounter });
// An optional pause stands in for an LLM's latency, so two workers overlap on the queue.
const summarizer = {
  id: extractive.id,
  /** @param {import('@mnemo/core').SummarizeInput} input */
  async summarize(input) {
    if (summarizeDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, summarizeDelayMs));
    return extractive.summarize(input);
  },
};

const store = createSqliteStore({ path, busyTimeoutMs: 30_000 });
const compaction = {
  store,
  summarizer,
  tokenCounter,
  // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- the parent's settings JSON; typescript-eslint does not read a JSDoc cast
  settings: /** @type {import('@mnemo/core').CompactionSettings} */ (JSON.parse(settingsJson)),
};
const ran = [];
const errors = [];
const worker = createJobWorker({
  store,
  workerId,
  pollIntervalMs: 20,
  leaseMs: 60_000,
  handlers: {
    compact: async (job, scope, signal) => {
      ran.push({ id: job.id, conversationId: job.conversationId, attempts: job.attempts });
      // What createCompactor's job handler does (createCompactor itself is not exported by @mnemo/core).
      await compactConversation(compaction, scope, { signal });
    },
  },
  onError: (error, job) =>
    errors.push({ jobId: job?.id, message: error instanceof Error ? error.message : String(error) }),
});

/** @param {{ type: string }} message */
async function onMessage(message) {
  if (message.type === 'go') worker.start();
  if (message.type === 'stop') {
    await worker.stop();
    await store.close();
    process.send({ type: 'done', workerId, ran, errors }, () => process.disconnect());
  }
}
// Nothing awaits a listener: a failed stop is an unhandled rejection, which ends this process.
process.on('message', (message) => void onMessage(/** @type {{ type: string }} */ (message)));
process.send({ type: 'ready' });
