// Child process of postgres-multiprocess.test.ts: leases jobs through the BUILT @mnemo/postgres until
// none is due, completing each, and reports the ids it leased. With MODE=hold it leases one job with a
// short lease and then hangs without completing it, as a replica that died would.
// Usage: node lease-worker.mjs URL SCHEMA WORKER_ID MODE(drain|hold)
import { createPostgresStore } from '@mnemo/postgres';

const [url, schema, workerId, mode] = process.argv.slice(2);
const go = new Promise((resolve) => process.once('message', resolve));
const store = await createPostgresStore({ connectionString: url, schema, poolMax: 2 });
process.send({ type: 'ready' });
await go;

if (mode === 'hold') {
  const job = await store.leaseJob({ workerId, leaseMs: 1000, now: new Date().toISOString() });
  process.send({ type: 'holding', job });
  // Never completes: the test kills this process while it holds the lease.
  setInterval(() => undefined, 60_000);
} else {
  const leased = [];
  // Two loops per process, so leases also race inside one process.
  async function drain(loop) {
    for (;;) {
      const job = await store.leaseJob({
        workerId: `${workerId}.${loop}`,
        leaseMs: 60_000,
        now: new Date().toISOString(),
      });
      if (job === undefined) return;
      leased.push(job.id);
      await store.completeJob(job, new Date().toISOString());
    }
  }
  await Promise.all([drain(0), drain(1)]);
  await store.close();
  process.send({ type: 'done', leased }, () => process.disconnect());
}
