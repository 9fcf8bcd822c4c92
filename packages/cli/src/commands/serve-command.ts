import { resolve } from 'node:path';
import { checkListenHost, createServerApp, defaultPort, startServer, type ServerLimits } from '@mnemo/server';
import { mountInspectorRoutes } from '@mnemo/server/inspect';
import { mountMcpRoutes } from '@mnemo/server/mcp';
import { mountProxyRoutes } from '@mnemo/server/proxy';
import { SqliteStore } from '@mnemo/sqlite';
import { InvalidArgumentError, type Command } from 'commander';
import { pino } from 'pino';
import { embedderOption, withEmbedderFlag } from './embedder-option.js';
import type { CliIo } from '../cli-io.js';
import { isPostgresUrl, loadCliConfig, type CliConfig, type CliServerConfig } from '../config/cli-config.js';
import { checkVectorModels } from '../store/check-vector-models.js';
import { chooseEmbedder, chooseQueryEmbedder, chooseRefiner, refinerModelOf } from '../store/choose-embedder.js';
import { createServeMemory } from '../store/create-serve-memory.js';
import { describeDatabase, openCliStore, openStoreWhenAvailable } from '../store/open-cli-store.js';
import {
  announceListening,
  defaultHttpProcessCount,
  isHttpProcess,
  nextStopMessage,
  startHttpProcesses,
} from '../workers/start-http-processes.js';
import { defaultWorkerCount, startWorkerProcesses, type WorkerProcesses } from '../workers/start-worker-processes.js';
import { databaseOf, dbOptionDescription } from './add-store-options.js';
import { nextShutdownSignal } from './next-shutdown-signal.js';
import { defaultEmbeddingThreads } from './worker-command.js';

interface ServeFlags {
  readonly port?: number;
  readonly host?: string;
  readonly db?: string;
  readonly config?: string;
  readonly workers?: number;
  readonly httpProcesses?: number;
}

// How long a stopping `serve` gives its workers before killing them: a killed worker loses nothing (its
// job's lease lapses and the job runs again), so shutdown never waits for a long model call.
const workerStopTimeoutMs = 500;
// How long a stopping primary gives its HTTP processes: a bit more than their own graceful shutdown
// (in-flight requests get 10 s), so a hung one is killed rather than left behind.
const httpStopTimeoutMs = 11_000;

/** Host `mnemo serve` listens on unless `--host` or the config file's `server.host` says otherwise. */
export const defaultServeHost = '127.0.0.1';

/**
 * Adds `mnemo serve`: the HTTP API on the store (a SQLite file, or PostgreSQL for many replicas on one
 * database), with `--workers` background worker processes beside it (`mnemo worker`), until SIGINT or SIGTERM.
 */
export function registerServeCommand(program: Command, io: CliIo): void {
  program
    .command('serve')
    .description(
      'run the HTTP API (memory and resource API, OpenAI-compatible proxy, MCP, the /inspect page, /metrics, /openapi.json) on the store',
    )
    .option('--port <n>', `port to listen on; 0 picks a free one (default: ${defaultPort})`, parsePort)
    .option('--host <address>', `address to listen on; any but loopback needs API keys (default: ${defaultServeHost})`)
    .option('--db <path|url>', dbOptionDescription)
    .addOption(embedderOption())
    .option(
      '--http-processes <n>',
      'HTTP server processes sharing the port (node:cluster), each on its own store connection; 1: this process serves (default: 1 on up to 2 cores, else one per core left after the workers; MNEMO_HTTP_PROCESSES)',
      parseHttpProcessCount,
    )
    .option(
      '--workers <n>',
      `background worker processes to start beside the server; 0: this process only serves (default: ${defaultWorkerCount()}, from the cores)`,
      parseWorkerCount,
    )
    .action(async (_flags: ServeFlags, command: Command) => {
      const flags = command.optsWithGlobals<ServeFlags & { embedder?: string }>();
      await runServe(flags, withEmbedderFlag(io, flags));
    });
}

async function runServe(flags: ServeFlags, io: CliIo): Promise<void> {
  const config = await loadCliConfig({
    env: io.env,
    cwd: io.cwd,
    ...(flags.config === undefined ? {} : { configPath: flags.config }),
  });
  const settings: CliServerConfig = config.server ?? { apiKeys: [], corsOrigins: [], allowedHosts: [] };
  const host = flags.host ?? settings.host ?? defaultServeHost;
  // Before opening the database, so a refused host leaves no file behind.
  checkListenHost(host, settings.apiKeys.length);
  const db = databaseOf(flags, config, io);
  const port = flags.port ?? settings.port ?? defaultPort;
  if (isHttpProcess(io.env)) return runHttpProcess({ config, settings, host, port, db, io });
  const workerCount = flags.workers ?? settings.workers ?? defaultWorkerCount();
  const httpProcessCount = flags.httpProcesses ?? settings.httpProcesses ?? defaultHttpProcessCount(workerCount);
  if (httpProcessCount > 1)
    return runHttpPrimary({ config, settings, host, port, db, io }, flags, workerCount, httpProcessCount);
  const serving = await openHttpServer({ config, settings, host, port, db, io }, { httpProcess: false });
  const { logger } = serving;
  // Listening for the signal before saying "listening": a script may send it the moment it reads the line.
  const shutdown = nextShutdownSignal();
  io.stdout.write(`mnemo listening on ${serving.url}\n`);
  const workers = workerCount === 0 ? undefined : startWorkers(workerCount, db, flags, io, logger, settings);
  logger.info(
    {
      ...serving.describe,
      url: serving.url,
      db: describeDatabase(db),
      apiKeys: settings.apiKeys.length,
      workers: workers?.pids() ?? [],
    },
    'listening',
  );
  void serving.checkVectorModels();
  const signal = await shutdown;
  logger.info({ signal }, 'shutting down: finishing in-flight requests and stopping the workers');
  await Promise.all([serving.close(), workers?.stop(workerStopTimeoutMs)]);
  logger.info('stopped');
}

/** What every way of serving needs: the settled config, where to listen, and the store. */
interface ServeSetup {
  readonly config: CliConfig;
  readonly settings: CliServerConfig;
  readonly host: string;
  readonly port: number;
  readonly db: string;
  readonly io: CliIo;
}

/** One process's HTTP server on its own store connection and query embedder. */
interface HttpServing {
  readonly url: string;
  readonly logger: pino.Logger;
  /** For the `listening` log line. */
  readonly describe: { readonly summarizer: string; readonly embedder: string; readonly refiner: string };
  /** Warns when the store's vectors are another embedder's (`checkVectorModels`); run once, after `listening`. */
  checkVectorModels(): Promise<void>;
  /** Finishes in-flight requests, closes the memory (and store) and the query embedder. */
  close(): Promise<void>;
}

async function openHttpServer(setup: ServeSetup, options: { httpProcess: boolean }): Promise<HttpServing> {
  const { config, settings, io } = setup;
  // JSON log lines go to stdout after the one "listening" line that scripts wait for; those of one of
  // several HTTP processes say which process answered.
  const logger = pino({ base: { service: 'mnemo', ...(options.httpProcess ? { pid: process.pid } : {}) } }, io.stdout);
  const store = await openStoreWhenAvailable(setup.db, logger);
  const queryEmbedder = chooseQueryEmbedder(config);
  // The refiner's query embeddings; its refine jobs run in the workers.
  const refiner = chooseRefiner(config, { callerDeadlineMs: config.embedder.queryTimeoutMs, runsJobs: false });
  const { memory, summarizer, embedder } = createServeMemory({
    config,
    store,
    logger,
    ...(queryEmbedder.embedder === undefined ? {} : { embedder: queryEmbedder.embedder }),
    ...(refiner.refiner === undefined ? {} : { refiner: refiner.refiner }),
  });
  let server;
  try {
    const app = createServerApp({
      memory,
      logger,
      auth: { keys: settings.apiKeys },
      limits: serverLimits(settings),
      llm: { ...config.llm },
      // The Messages upstream shares the OpenAI one's timeouts.
      anthropic: {
        ...config.anthropic,
        connectTimeoutMs: config.llm.connectTimeoutMs,
        firstByteTimeoutMs: config.llm.firstByteTimeoutMs,
        idleTimeoutMs: config.llm.idleTimeoutMs,
      },
      // The proxy (POST /v1/chat/completions and /v1/responses, upstream from llm.*; POST /v1/messages, upstream from anthropic.*), MCP at /mcp, the inspector at /inspect.
      routes: [mountProxyRoutes, mountMcpRoutes, mountInspectorRoutes],
      ...(settings.corsOrigins.length === 0 ? {} : { cors: { origins: settings.corsOrigins } }),
      allowedHosts: settings.allowedHosts,
    });
    server = await startServer({ app, host: setup.host, port: setup.port });
  } catch (error) {
    await memory.close();
    await queryEmbedder.close();
    await refiner.close();
    throw error;
  }
  // Loads the model in its thread now, so the first requests' deadlines do not pass on the load.
  void queryEmbedder.load().catch((error: unknown) => logger.error({ err: error }, 'cannot load the query embedder'));
  void refiner.load().catch((error: unknown) => logger.error({ err: error }, 'cannot load the refiner'));
  // A damaged page otherwise shows only when a call reads it: every page is checked once, on a thread,
  // and /ready fails from then on if one is damaged.
  if (store instanceof SqliteStore) {
    void store
      .checkIntegrity()
      .then((problems) =>
        problems.length === 0
          ? undefined
          : logger.error(
              { problems, db: setup.db },
              'the database file is damaged; /ready fails until it is restored from a backup',
            ),
      )
      .catch((error: unknown) => logger.warn({ err: error }, 'cannot check the database file for damage'));
  }
  const running = server;
  return {
    url: running.url,
    logger,
    describe: {
      summarizer: summarizer?.id ?? 'extractive@1',
      embedder: embedder?.model ?? 'none',
      refiner: refiner.refiner?.embedder.model ?? 'none',
    },
    async checkVectorModels() {
      if (embedder !== undefined)
        await checkVectorModels(store, embedder.model, logger, refiner.refiner?.embedder.model);
    },
    async close() {
      await running.close();
      await queryEmbedder.close();
      await refiner.close();
    },
  };
}

/** One of the HTTP processes of `serve --http-processes N`: serves until its primary (or a signal) stops it; runs no workers. */
async function runHttpProcess(setup: ServeSetup): Promise<void> {
  const serving = await openHttpServer(setup, { httpProcess: true });
  const { logger } = serving;
  const shutdown = Promise.race([nextShutdownSignal(), nextStopMessage().then(() => 'stop' as const)]);
  announceListening(serving.url);
  logger.info({ ...serving.describe, url: serving.url, role: 'http' }, 'listening');
  const reason = await shutdown;
  logger.info({ reason }, 'HTTP process shutting down: finishing in-flight requests');
  await serving.close();
  // The IPC channel to the primary would keep this process alive.
  if (process.connected) process.disconnect();
}

/**
 * `serve --http-processes N` (N > 1): migrates the store once, starts N HTTP processes on one port
 * (node:cluster) and the worker processes, prints the one "listening" line, and on SIGINT/SIGTERM stops
 * them all. This process serves no request itself.
 */
async function runHttpPrimary(
  setup: ServeSetup,
  flags: ServeFlags,
  workerCount: number,
  httpProcessCount: number,
): Promise<void> {
  const { io, db } = setup;
  const logger = pino({ base: { service: 'mnemo' } }, io.stdout);
  // Migrates the schema before the HTTP processes open it side by side.
  await (await openCliStore(db)).close();
  const postgres = isPostgresUrl(db);
  const shutdown = nextShutdownSignal();
  const http = await startHttpProcesses({
    count: httpProcessCount,
    args: [
      '--host',
      setup.host,
      '--port',
      String(setup.port),
      ...(postgres ? [] : ['--db', db]),
      ...(flags.config === undefined ? [] : ['--config', resolve(io.cwd, flags.config)]),
    ],
    cwd: io.cwd,
    env: { ...io.env, ...(postgres ? { MNEMO_DATABASE_URL: db } : {}) },
    stdout: io.stdout,
    stderr: io.stderr,
    logger,
  });
  io.stdout.write(`mnemo listening on ${http.url}\n`);
  http.releaseOutput();
  const workers = workerCount === 0 ? undefined : startWorkers(workerCount, db, flags, io, logger, setup.settings);
  logger.info(
    { url: http.url, db: describeDatabase(db), httpProcesses: http.pids(), workers: workers?.pids() ?? [] },
    'listening',
  );
  void checkStoreVectorModels(setup, logger);
  const signal = await shutdown;
  logger.info({ signal }, 'shutting down: the HTTP processes finish their in-flight requests; stopping the workers');
  await Promise.all([http.stop(httpStopTimeoutMs), workers?.stop(workerStopTimeoutMs)]);
  logger.info('stopped');
}

/** {@link checkVectorModels} on a connection of its own (the primary of several HTTP processes serves none). */
async function checkStoreVectorModels(setup: ServeSetup, logger: pino.Logger): Promise<void> {
  try {
    const model = chooseEmbedder(setup.config)?.model;
    if (model === undefined) return;
    const store = await openCliStore(setup.db);
    try {
      await checkVectorModels(store, model, logger, refinerModelOf(setup.config));
    } finally {
      await store.close();
    }
  } catch (error) {
    logger.warn({ err: error }, 'cannot count the stored vectors per model');
  }
}

/**
 * The `mnemo worker` processes of this server, on its store and config, each with its share of the cores
 * as embedding threads; a PostgreSQL URL goes by environment, not argv, so `ps` shows no password.
 */
function startWorkers(
  count: number,
  db: string,
  flags: ServeFlags,
  io: CliIo,
  logger: pino.Logger,
  settings: CliServerConfig,
): WorkerProcesses {
  const postgres = isPostgresUrl(db);
  return startWorkerProcesses({
    count,
    args: [
      ...(postgres ? [] : ['--db', db]),
      ...(flags.config === undefined ? [] : ['--config', resolve(io.cwd, flags.config)]),
      '--embedding-threads',
      String(defaultEmbeddingThreads(count)),
    ],
    cwd: io.cwd,
    env: { ...io.env, ...(postgres ? { MNEMO_DATABASE_URL: db } : {}) },
    stdout: io.stdout,
    stderr: io.stderr,
    logger,
    ...(settings.workerHeartbeatTimeoutMs === undefined
      ? {}
      : { heartbeatTimeoutMs: settings.workerHeartbeatTimeoutMs }),
  });
}

function serverLimits(settings: CliServerConfig): Partial<ServerLimits> {
  const { maxBodyBytes, maxImportBytes, rateLimit, maxConcurrentRequests } = settings;
  return {
    ...(maxConcurrentRequests === undefined ? {} : { maxConcurrentRequests }),
    ...(maxBodyBytes === undefined ? {} : { maxBodyBytes }),
    ...(maxImportBytes === undefined ? {} : { maxImportBytes }),
    ...(rateLimit === undefined ? {} : { rateLimit }),
  };
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || !Number.isInteger(port) || port > 65_535)
    throw new InvalidArgumentError('must be a port number from 0 to 65535.');
  return port;
}

function parseHttpProcessCount(value: string): number {
  const count = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || !Number.isInteger(count) || count < 1 || count > 64)
    throw new InvalidArgumentError('must be a number of HTTP processes from 1 to 64.');
  return count;
}

function parseWorkerCount(value: string): number {
  const count = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || !Number.isInteger(count) || count > 64)
    throw new InvalidArgumentError('must be a number of worker processes from 0 to 64.');
  return count;
}
