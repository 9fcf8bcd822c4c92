import { createGptTokenCounter, createMemory } from '@mnemo/core';
import { checkListenHost, createServerApp, defaultPort, startServer, type ServerLimits } from '@mnemo/server';
import { mountInspectorRoutes } from '@mnemo/server/inspect';
import { mountMcpRoutes } from '@mnemo/server/mcp';
import { mountProxyRoutes } from '@mnemo/server/proxy';
import { InvalidArgumentError, type Command } from 'commander';
import { pino } from 'pino';
import type { CliIo } from '../cli-io.js';
import { loadCliConfig, type CliServerConfig } from '../config/cli-config.js';
import { engineDefaultsOf } from '../config/cli-policies.js';
import { chooseSummarizer } from '../store/choose-summarizer.js';
import { chooseEmbedder } from '../store/choose-embedder.js';
import { describeDatabase, openCliStore } from '../store/open-cli-store.js';
import { databaseOf, dbOptionDescription } from './add-store-options.js';

interface ServeFlags {
  readonly port?: number;
  readonly host?: string;
  readonly db?: string;
  readonly config?: string;
}

/** Host `mnemo serve` listens on unless `--host` or the config file's `server.host` says otherwise. */
export const defaultServeHost = '127.0.0.1';

/**
 * Adds `mnemo serve`: the HTTP API on the store (a SQLite file, or PostgreSQL for many replicas on one
 * database), with the background job worker, until SIGINT or SIGTERM.
 */
export function registerServeCommand(program: Command, io: CliIo): void {
  program
    .command('serve')
    .description('run the HTTP API (memory and resource API, OpenAI-compatible proxy, MCP, the /inspect page, /metrics, /openapi.json) on the store')
    .option('--port <n>', `port to listen on; 0 picks a free one (default: ${defaultPort})`, parsePort)
    .option('--host <address>', `address to listen on; any but loopback needs API keys (default: ${defaultServeHost})`)
    .option('--db <path|url>', dbOptionDescription)
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
  const tokenCounter = createGptTokenCounter(config.llm.model === undefined ? {} : { model: config.llm.model });
  const summarizer = chooseSummarizer(config).create?.(tokenCounter);
  const embedder = chooseEmbedder(config);
  const defaults = engineDefaultsOf(config.context);
  const memory = createMemory({
    store,
    ...(embedder === undefined ? {} : { embedder }),
    tokenCounter,
    context: defaults.context,
    compaction: { settings: defaults.compactionSettings, ...(summarizer === undefined ? {} : { summarizer }) },
    worker: { onError: (error) => logger.error({ err: error }, 'background job failed') },
  });
  let server;
  try {
    const app = createServerApp({
      memory,
      store,
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
    throw error;
  }
  io.stdout.write(`mnemo listening on ${server.url}\n`);
  logger.info(
    { url: server.url, db: describeDatabase(db), apiKeys: settings.apiKeys.length, summarizer: summarizer?.id ?? 'extractive@1', embedder: embedder?.model ?? 'none' },
    'listening',
  );
  const signal = await nextShutdownSignal();
  logger.info({ signal }, 'shutting down: finishing in-flight requests, then stopping the worker');
  await server.close();
  logger.info('stopped');
}

function serverLimits(settings: CliServerConfig): Partial<ServerLimits> {
  const { maxBodyBytes, maxImportBytes, rateLimit } = settings;
  return {
    ...(maxBodyBytes === undefined ? {} : { maxBodyBytes }),
    ...(maxImportBytes === undefined ? {} : { maxImportBytes }),
    ...(rateLimit === undefined ? {} : { rateLimit }),
  };
}

// Signals are process-wide; serve is the one command that waits for them. After the first, the
// default handlers are back, so a second Ctrl-C ends a shutdown that hangs.
function nextShutdownSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      resolve(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || !Number.isInteger(port) || port > 65_535) throw new InvalidArgumentError('must be a port number from 0 to 65535.');
  return port;
}
