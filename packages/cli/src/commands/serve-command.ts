import { resolve } from 'node:path';
import { checkListenHost, createServerApp, defaultPort, startServer, type ServerLimits } from '@mnemo/server';
import { mountInspectorRoutes } from '@mnemo/server/inspect';
import { mountMcpRoutes } from '@mnemo/server/mcp';
import { mountProxyRoutes } from '@mnemo/server/proxy';
import { InvalidArgumentError, type Command } from 'commander';
import { pino } from 'pino';
import type { CliIo } from '../cli-io.js';
import { isPostgresUrl, loadCliConfig, type CliServerConfig } from '../config/cli-config.js';
import { chooseQueryEmbedder } from '../store/choose-embedder.js';
import { createServeMemory } from '../store/create-serve-memory.js';
import { describeDatabase, openCliStore } from '../store/open-cli-store.js';
import { defaultWorkerCount, startWorkerProcesses, type WorkerProcesses } from '../workers/start-worker-processes.js';
import { databaseOf, dbOptionDescription } from './add-store-options.js';
import { nextShutdownSignal } from './next-shutdown-signal.js';

interface ServeFlags {
  readonly port?: number;
  readonly host?: string;
  readonly db?: string;
  readonly config?: string;
  readonly workers?: number;
}

// How long a stopping `serve` gives its workers before killing them: a killed worker loses nothing (its
// job's lease lapses and the job runs again), so shutdown never waits for a long model call.
const workerStopTimeoutMs = 500;

/** Host `mnemo serve` listens on unless `--host` or the config file's `server.host` says otherwise. */
export const defaultServeHost = '127.0.0.1';

/**
 * Adds `mnemo serve`: the HTTP API on the store (a SQLite file, or PostgreSQL for many replicas on one
 * database), with `--workers` background worker processes beside it (`mnemo worker`), until SIGINT or SIGTERM.
 */
export function registerServeCommand(program: Command, io: CliIo): void {
  program
    .command('serve')
    .description('run the HTTP API (memory and resource API, OpenAI-compatible proxy, MCP, the /inspect page, /metrics, /openapi.json) on the store')
    .option('--port <n>', `port to listen on; 0 picks a free one (default: ${defaultPort})`, parsePort)
    .option('--host <address>', `address to listen on; any but loopback needs API keys (default: ${defaultServeHost})`)
    .option('--db <path|url>', dbOptionDescription)
    .option('--workers <n>', `background worker processes to start beside the server; 0: this process only serves (default: ${defaultWorkerCount()}, from the cores)`, parseWorkerCount)
    .action(async (_flags: ServeFlags, command: Command) => {
      await runServe(command.optsWithGlobals<ServeFlags>(), io);
    });
}

async function runServe(flags: ServeFlags, io: CliIo): Promise<void> {
  const config = await loadCliConfig({ env: io.env, cwd: io.cwd, ...(flags.config === undefined ? {} : { configPath: flags.config }) });
  const settings: CliServerConfig = config.server ?? { apiKeys: [], corsOrigins: [], allowedHosts: [] };
  const host = flags.host ?? settings.host ?? defaultServeHost;
  // Before opening the database, so a refused host leaves no file behind.
  checkListenHost(host, settings.apiKeys.length);
  const db = databaseOf(flags, config, io);
  const store = await openCliStore(db);
  // JSON log lines go to stdout after the one "listening" line that scripts wait for.
  const logger = pino({ base: { service: 'mnemo' } }, io.stdout);
  const queryEmbedder = chooseQueryEmbedder(config);
  const { memory, summarizer, embedder } = createServeMemory({ config, store, logger, ...(queryEmbedder.embedder === undefined ? {} : { embedder: queryEmbedder.embedder }) });
  let server;
  try {
    const app = createServerApp({
      memory,
      logger,
      auth: { keys: settings.apiKeys },
      limits: serverLimits(settings),
      llm: { ...config.llm },
      // The OpenAI-compatible proxy (POST /v1/chat/completions, upstream from llm.*), MCP at /mcp, the inspector at /inspect.
      routes: [mountProxyRoutes, mountMcpRoutes, mountInspectorRoutes],
      ...(settings.corsOrigins.length === 0 ? {} : { cors: { origins: settings.corsOrigins } }),
      allowedHosts: settings.allowedHosts,
    });
    server = await startServer({ app, host, port: flags.port ?? settings.port ?? defaultPort });
  } catch (error) {
    await memory.close();
    await queryEmbedder.close();
    throw error;
  }
  io.stdout.write(`mnemo listening on ${server.url}\n`);
  // Loads the model in its thread now, so the first requests' deadlines do not pass on the load.
  void queryEmbedder.load().catch((error: unknown) => logger.error({ err: error }, 'cannot load the query embedder'));
  const workerCount = flags.workers ?? settings.workers ?? defaultWorkerCount();
  const workers = workerCount === 0 ? undefined : startWorkers(workerCount, db, flags, io, logger);
  logger.info(
    {
      url: server.url,
      db: describeDatabase(db),
      apiKeys: settings.apiKeys.length,
      summarizer: summarizer?.id ?? 'extractive@1',
      embedder: embedder?.model ?? 'none',
      workers: workers?.pids() ?? [],
    },
    'listening',
  );
  const signal = await nextShutdownSignal();
  logger.info({ signal }, 'shutting down: finishing in-flight requests and stopping the workers');
  await Promise.all([server.close(), workers?.stop(workerStopTimeoutMs)]);
  await queryEmbedder.close();
  logger.info('stopped');
}

/** The `mnemo worker` processes of this server, on its store and config; a PostgreSQL URL goes by environment, not argv, so `ps` shows no password. */
function startWorkers(count: number, db: string, flags: ServeFlags, io: CliIo, logger: pino.Logger): WorkerProcesses {
  const postgres = isPostgresUrl(db);
  return startWorkerProcesses({
    count,
    args: [...(postgres ? [] : ['--db', db]), ...(flags.config === undefined ? [] : ['--config', resolve(io.cwd, flags.config)])],
    cwd: io.cwd,
    env: { ...io.env, ...(postgres ? { MNEMO_DATABASE_URL: db } : {}) },
    stdout: io.stdout,
    stderr: io.stderr,
    logger,
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
  if (!/^\s*\d+\s*$/.test(value) || !Number.isInteger(port) || port > 65_535) throw new InvalidArgumentError('must be a port number from 0 to 65535.');
  return port;
}

function parseWorkerCount(value: string): number {
  const count = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || !Number.isInteger(count) || count > 64) throw new InvalidArgumentError('must be a number of worker processes from 0 to 64.');
  return count;
}
