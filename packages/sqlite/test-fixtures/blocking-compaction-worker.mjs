// Child process of sqlite-compaction-process.test.ts: the victim. Opens the file through the BUILT
// packages as an app would (createMemory starts its job worker), leases the queued compaction job, and
// blocks inside summarize so the parent can kill it with SIGKILL while it holds the lease. It tells the
// parent over IPC once it is inside summarize. Usage: node blocking-compaction-worker.mjs PATH SETTINGS_JSON
import { createMemory } from '@mnemo/core';
import { createSqliteStore } from '@mnemo/sqlite';

const [path, settingsJson] = process.argv.slice(2);

/** A summarizer that never finishes on its own: the LLM call that hangs when the process dies. */
const blockingSummarizer = {
  id: 'blocking',
  /** @param {import('@mnemo/core').SummarizeInput} input */
  async summarize(input) {
    const seqs = input.messages.map((message) => message.seq);
    process.send({ type: 'summarizing', fromSeq: seqs[0], toSeq: seqs[seqs.length - 1] });
    // A referenced timer keeps the process alive while it waits to be killed.
    await new Promise((resolve) => setTimeout(resolve, 10 * 60_000));
    throw new Error('the blocking summarizer was never meant to finish');
  },
};

createMemory({
  store: createSqliteStore({ path }),
  compaction: {
    summarizer: blockingSummarizer,
    // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- the parent's settings JSON; typescript-eslint does not read a JSDoc cast
    settings: /** @type {Partial<import('@mnemo/core').CompactionSettings>} */ (JSON.parse(settingsJson)),
  },
  knowledge: false,
  worker: {
    workerId: 'victim',
    leaseMs: 1500,
    pollIntervalMs: 20,
    onError: (error) => process.send({ type: 'error', message: String(error) }),
  },
});
