import type { Readable, Writable } from 'node:stream';
import { createGptTokenCounter, createMemory } from '@mnemo/core';
import { serveMcpOverStdio } from '@mnemo/server/mcp';
import type { Command } from 'commander';
import type { CliIo } from '../cli-io.js';
import { loadCliConfig } from '../config/cli-config.js';
import { engineDefaultsOf } from '../config/cli-policies.js';
import { chooseSummarizer } from '../store/choose-summarizer.js';
import { chooseEmbedder, chooseRefiner, oneUserQueryDeadline } from '../store/choose-embedder.js';
import { openCliStore } from '../store/open-cli-store.js';
import { databaseOf, dbOptionDescription } from './add-store-options.js';

interface McpFlags {
  readonly db?: string;
  readonly user?: string;
  readonly tenant?: string;
  readonly config?: string;
}

/**
 * Adds `mnemo mcp`: serves mnemo's MCP tools over stdio (for Claude Desktop, IDEs and agents that spawn
 * MCP servers) on the store (SQLite or PostgreSQL), for one tenant, until the client closes stdin or a signal arrives.
 */
export function registerMcpCommand(program: Command, io: CliIo): void {
  program
    .command('mcp')
    .description('serve the MCP tools (remember, get_context, recall, list_facts, memory) over stdio on the store')
    .option('--db <path|url>', dbOptionDescription)
    .option('--tenant <id>', 'tenant every call acts for (default: default)')
    .option('--user <id>', 'user of the calls that name no user_id (default: default)')
    .action(async (_flags: McpFlags, command: Command) => {
      await runMcp(command.optsWithGlobals<McpFlags>(), io);
    });
}

async function runMcp(flags: McpFlags, io: CliIo): Promise<void> {
  const config = await loadCliConfig({
    env: io.env,
    cwd: io.cwd,
    ...(flags.config === undefined ? {} : { configPath: flags.config }),
  });
  const store = await openCliStore(databaseOf(flags, config, io));
  const tokenCounter = createGptTokenCounter(config.llm.model === undefined ? {} : { model: config.llm.model });
  const summarizer = chooseSummarizer(config).create?.(tokenCounter);
  // stdout carries JSON-RPC only: every diagnostic goes to stderr.
  const log = {
    error: (fields: Record<string, unknown>, message: string) =>
      io.stderr.write(`mnemo mcp: ${message}: ${describe(fields.err)}\n`),
  };
  const embedder = chooseEmbedder(config);
  const refiner = chooseRefiner(config, { runsJobs: true });
  const defaults = engineDefaultsOf(config.context);
  const memory = createMemory({
    store,
    ...(embedder === undefined ? {} : { embedder }),
    ...(refiner.refiner === undefined ? {} : { refiner: refiner.refiner }),
    // Past the deadline beside a refiner, the static table's vectors rank; past an endpoint's, keyword-only.
    queryEmbeddingTimeoutMs: oneUserQueryDeadline(config, refiner.refiner !== undefined),
    onQueryEmbeddingError: (error) => log.error({ err: error }, 'query embedding failed, recalling keyword-only'),
    tokenCounter,
    context: defaults.context,
    compaction: { settings: defaults.compactionSettings, ...(summarizer === undefined ? {} : { summarizer }) },
    worker: { onError: (error) => log.error({ err: error }, 'background job failed') },
  });
  try {
    const server = await serveMcpOverStdio({
      memory,
      ...(flags.tenant === undefined ? {} : { tenantId: flags.tenant }),
      ...(flags.user === undefined ? {} : { userId: flags.user }),
      // main.ts hands in the process's streams, which are these stream classes.
      stdin: io.stdin as Readable,
      stdout: io.stdout as Writable,
      log,
    });
    const signal = nextShutdownSignal();
    await Promise.race([server.closed, signal.received]);
    signal.dispose();
    await server.close();
  } finally {
    await memory.close();
    await refiner.close();
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// An MCP client stops its server by closing stdin or by a signal; either way, stop the worker and close the store.
function nextShutdownSignal(): { received: Promise<void>; dispose: () => void } {
  let onSignal: () => void = () => undefined;
  const received = new Promise<void>((resolve) => {
    onSignal = () => resolve();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  });
  return {
    received,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
