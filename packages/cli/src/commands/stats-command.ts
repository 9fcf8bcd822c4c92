import { MemoryError, savedPercent, type ConversationStats, type Memory } from '@mnemo/core';
import type { Command } from 'commander';
import type { CliIo } from '../cli-io.js';
import { loadCliConfig, resolvePath } from '../config/cli-config.js';
import { formatCount, formatPercent, formatTable } from '../output/format-table.js';
import { openMemory } from '../store/open-memory.js';

interface StatsFlags {
  readonly db?: string;
  readonly conversation?: string;
  readonly json?: boolean;
  readonly config?: string;
}

/** Adds `mnemo stats`: counters and token usage of one conversation, or of every conversation in the store. */
export function registerStatsCommand(program: Command, io: CliIo): void {
  program
    .command('stats')
    .description('show messages, tokens and context usage of one conversation, or list every conversation')
    .option('--db <path>', 'SQLite file (default: MNEMO_DB or ./mnemo.db)')
    .option('--conversation <id>', 'show this conversation only')
    .option('--json', 'print JSON instead of a table')
    .action(async (_flags: StatsFlags, command: Command) => {
      await runStats(command.optsWithGlobals<StatsFlags>(), io);
    });
}

async function runStats(flags: StatsFlags, io: CliIo): Promise<void> {
  const config = await loadCliConfig({ env: io.env, cwd: io.cwd, ...(flags.config === undefined ? {} : { configPath: flags.config }) });
  const db = flags.db === undefined ? config.db : resolvePath(io.cwd, flags.db);
  // Read-only: looking must never create a database or change one.
  const memory = openMemory({ db, readonly: true });
  try {
    if (flags.conversation !== undefined) {
      const stats = await memory.stats({ conversationId: flags.conversation });
      if (stats === undefined) {
        throw new MemoryError('not_found', `conversation ${JSON.stringify(flags.conversation)} has no messages in ${db}`, {
          details: { field: 'conversation' },
        });
      }
      io.stdout.write(flags.json === true ? `${JSON.stringify(stats)}\n` : formatConversation(stats));
      return;
    }
    const conversations = await listAllStats(memory);
    if (flags.json === true) io.stdout.write(`${JSON.stringify({ db, conversations })}\n`);
    else io.stdout.write(conversations.length === 0 ? `no conversations in ${db}\n` : formatConversations(conversations));
  } finally {
    await memory.close();
  }
}

/** Every conversation of the default tenant with its stats, paging through the store. */
async function listAllStats(memory: Memory): Promise<ConversationStats[]> {
  const all: ConversationStats[] = [];
  let cursor: string | undefined;
  do {
    const page = await memory.listConversations({}, { limit: 100, ...(cursor === undefined ? {} : { cursor }) });
    for (const conversation of page.items) {
      const stats = await memory.stats(conversation);
      if (stats !== undefined) all.push(stats);
    }
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return all;
}

function formatConversation(stats: ConversationStats): string {
  const rows = [
    ['conversation', stats.conversationId],
    ['user', stats.userId],
    ['tenant', stats.tenantId],
    ['messages', formatCount(stats.messageCount)],
    ['tokens', formatCount(stats.totalTokens)],
    ['first message', stats.firstMessageAt],
    ['last message', stats.lastMessageAt],
    ['context requests', formatCount(stats.usage.requests)],
    ['sent tokens', formatCount(stats.usage.sentTokens)],
    ['full-history tokens', formatCount(stats.usage.fullHistoryTokens)],
    ['saved tokens', `${formatCount(stats.usage.savedTokens)} (${formatPercent(savedShare(stats))})`],
    ['compactions', formatCount(stats.usage.compactions)],
    ['summarizer tokens', `${formatCount(stats.usage.summarizerInputTokens)} in + ${formatCount(stats.usage.summarizerOutputTokens)} out`],
    ['net saved tokens', formatCount(stats.usage.netSavedTokens)],
  ];
  return formatTable([{ header: 'field' }, { header: 'value' }], rows);
}

function formatConversations(conversations: readonly ConversationStats[]): string {
  const right = 'right' as const;
  const columns = [
    { header: 'conversation' },
    { header: 'user' },
    { header: 'messages', align: right },
    { header: 'tokens', align: right },
    { header: 'requests', align: right },
    { header: 'sent', align: right },
    { header: 'full history', align: right },
    { header: 'saved', align: right },
  ];
  const rows = conversations.map((stats) => [
    stats.conversationId,
    stats.userId,
    formatCount(stats.messageCount),
    formatCount(stats.totalTokens),
    formatCount(stats.usage.requests),
    formatCount(stats.usage.sentTokens),
    formatCount(stats.usage.fullHistoryTokens),
    formatPercent(savedShare(stats)),
  ]);
  return formatTable(columns, rows);
}

function savedShare(stats: ConversationStats): number {
  return savedPercent(stats.usage.sentTokens, stats.usage.fullHistoryTokens);
}
