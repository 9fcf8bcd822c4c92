import { availableParallelism } from 'node:os';
import type { Memory } from '@mnemo/core';
import { InvalidArgumentError, type Command } from 'commander';
import { pino } from 'pino';
import { embedderOption, withEmbedderFlag } from './embedder-option.js';
import type { CliIo } from '../cli-io.js';
import { loadCliConfig, type CliConfig } from '../config/cli-config.js';
import { sweepRetention } from '../retention/retention-rules.js';
import { chooseRefiner, chooseWorkerEmbedder } from '../store/choose-embedder.js';
import { createServeMemory } from '../store/create-serve-memory.js';
import { describeDatabase, openStoreWhenAvailable } from '../store/open-cli-store.js';
import { databaseOf, dbOptionDescription } from './add-store-options.js';
import { nextShutdownSignal } from './next-shutdown-signal.js';
import { parsePositiveInteger } from './parse-positive-integer.js';
import { startHeartbeat } from '../workers/worker-heartbeat.js';

interface WorkerFlags {
  readonly db?: string;
  readonly config?: string;
  readonly concurrency?: number;
  readonly leaseMs?: number;
  readonly embeddingThreads?: number;
}

/** How long a job stays leased to a worker that stopped answering, unless `--lease-ms` says otherwise. */
export const defaultWorkerLeaseMs = 60_000;

/** Job loops of one `mnemo worker` process unless `--concurrency` says otherwise: one slow model call does not hold the other jobs. */
export const defaultWorkerConcurrency = 2;

/**
 * USE-lite threads of one `mnemo worker` unless `--embedding-threads` says otherwise: one per core, at
 * most 4. Each thread holds its own copy of the model; `mnemo serve` passes its share of the cores.
 */
export function defaultEmbeddingThreads(workers = 1): number {
  return Math.max(1, Math.min(4, Math.ceil(availableParallelism() / workers)));
}

/**
 * Adds `mnemo worker`: runs the background jobs (embed, extract, compact) of a store, leased from it as
 * every other worker and replica does, without serving HTTP, until SIGINT or SIGTERM (or, when started
 * by `mnemo serve`, until its parent goes away). For deployments that scale serving and background work apart.
 */
export function registerWorkerCommand(program: Command, io: CliIo): void {
  program
    .command('worker')
    .description('run the background jobs (embedding, extraction, compaction) of the store, without serving HTTP')
    .option('--db <path|url>', dbOptionDescription)
    .addOption(embedderOption())
    .option(
      '--concurrency <n>',
      `jobs run side by side in this process (default: ${defaultWorkerConcurrency})`,
      parsePositiveInteger,
    )
    .option(
      '--lease-ms <ms>',
      `how long a job stays with a worker that died before another takes it; an attempt's deadline is 3/4 of it (default: ${defaultWorkerLeaseMs})`,
      parsePositiveInteger,
    )
    .option(
      '--embedding-threads <n>',
      `USE-lite threads embedding side by side, each with its own copy of the model, 1 to 16 (default: one per core, at most 4: ${defaultEmbeddingThreads()} here)`,
      parseEmbeddingThreads,
    )
    .action(async (_flags: WorkerFlags, command: Command) => {
      const flags = command.optsWithGlobals<WorkerFlags & { embedder?: string }>();
      await runWorker(flags, withEmbedderFlag(io, flags));
    });
}

async function runWorker(flags: WorkerFlags, io: CliIo): Promise<void> {
  const config = await loadCliConfig({
    env: io.env,
    cwd: io.cwd,
    ...(flags.config === undefined ? {} : { configPath: flags.config }),
  });
  const db = databaseOf(flags, config, io);
  const logger = pino({ base: { service: 'mnemo-worker', pid: process.pid } }, io.stdout);
  const store = await openStoreWhenAvailable(db, logger);
  const concurrency = flags.concurrency ?? defaultWorkerConcurrency;
  const leaseMs = flags.leaseMs ?? defaultWorkerLeaseMs;
  const embeddingThreads = flags.embeddingThreads ?? defaultEmbeddingThreads();
  const threaded = chooseWorkerEmbedder(config, embeddingThreads);
  const refiner = chooseRefiner(config, { runsJobs: true });
  const { memory, summarizer, embedder } = createServeMemory({
    config,
    store,
    logger,
    jobs: { concurrency, leaseMs },
    ...(threaded.embedder === undefined ? {} : { embedder: threaded.embedder }),
    ...(refiner.refiner === undefined ? {} : { refiner: refiner.refiner }),
  });
  logger.info(
    {
      db: describeDatabase(db),
      concurrency,
      leaseMs,
      embeddingThreads,
      summarizer: summarizer?.id ?? 'extractive@1',
      embedder: embedder?.model ?? 'none',
      refiner: refiner.refiner?.embedder.model ?? 'none',
    },
    'worker started',
  );
  // The job loops' poll timers are unref'd (they must not keep a library user's process alive), and signal
  // handlers hold nothing open: without this, an idle worker would exit at its first empty poll.
  const keepAlive = setInterval(() => undefined, 3_600_000);
  // Started by `mnemo serve`: it restarts a worker whose heartbeats stop.
  const stopHeartbeat = startHeartbeat();
  const stopRetention = startRetentionSweeps(memory, config, logger);
  const reason = await nextShutdownSignal();
  await stopRetention();
  stopHeartbeat();
  clearInterval(keepAlive);
  logger.info({ reason }, 'worker stopping: the running jobs’ leases lapse for another worker');
  await memory.close();
  await threaded.close();
  await refiner.close();
  logger.info('worker stopped');
}

function parseEmbeddingThreads(value: string): number {
  const threads = parsePositiveInteger(value);
  if (threads > 16) throw new InvalidArgumentError('must be a number of threads from 1 to 16.');
  return threads;
}

/**
 * With retention configured, sweeps every tenant now and then every `intervalMinutes` (the first one a
 * few seconds after start, jittered, so the workers of one server do not sweep at the same moment; a
 * sweep after another finds nothing left to erase). Logs what each sweep erased, and failures; returns the
 * stop, which waits for a sweep under way.
 */
function startRetentionSweeps(memory: Memory, config: CliConfig, logger: pino.Logger): () => Promise<void> {
  const { retention } = config;
  if (retention === undefined) return async () => undefined;
  const settled = { ...config, retention };
  let running: Promise<void> | undefined;
  const sweep = () => {
    running ??= sweepRetention(memory, settled)
      .then((results) => {
        const erased = results.flatMap(({ tenantId, outcomes }) =>
          outcomes.map((outcome) => ({
            tenantId,
            userId: outcome.userId,
            before: outcome.before,
            messages: outcome.receipt?.messages ?? 0,
          })),
        );
        if (erased.length > 0) logger.info({ erased }, 'retention: erased messages past their policy');
      })
      .catch((error: unknown) => logger.error({ err: error }, 'retention sweep failed; the next one tries again'))
      .finally(() => (running = undefined));
  };
  const first = setTimeout(sweep, 2_000 + Math.random() * 3_000);
  const every = setInterval(sweep, retention.intervalMinutes * 60_000);
  first.unref();
  every.unref();
  return async () => {
    clearTimeout(first);
    clearInterval(every);
    await running;
  };
}
