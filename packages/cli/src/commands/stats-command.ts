import { type ConversationStats, type JobBacklogStatus, type Memory, type Summary } from '@mnemo/core';
import { savedPercent } from '@mnemo/core/internals';
import type { EmbeddingCount } from '@mnemo/core/store-kit';
import type { Command } from 'commander';
import type { CliIo } from '../cli-io.js';
import { loadCliConfig, type CliConfig } from '../config/cli-config.js';
import { formatCount, formatPercent, formatTable } from '../output/format-table.js';
import { describeDatabase, openCliStore } from '../store/open-cli-store.js';
import { chooseEmbedder } from '../store/choose-embedder.js';
import { openMemory } from '../store/open-memory.js';
import {
  conversationScopeOf,
  databaseOf,
  dbOptionDescription,
  requireConversation,
  userOf,
  type StoreFlags,
} from './add-store-options.js';

interface StatsFlags extends StoreFlags {
  readonly conversation?: string;
}

/** One conversation's stats as `mnemo stats --conversation` reports them: the engine's, plus its summaries. */
interface ConversationReport extends ConversationStats {
  /** Summary versions stored for the conversation. */
  readonly summaryCount: number;
  /** Id of the newest summary, the one contexts use; absent before the first compaction. */
  readonly latestSummaryId?: string;
  /** `usage.netSavedTokens` as a percent of `usage.fullHistoryTokens`, one decimal. */
  readonly netSavedPercent: number;
}

/** Adds `mnemo stats`: counters and token usage of one conversation, or of every conversation in the store. */
export function registerStatsCommand(program: Command, io: CliIo): void {
  program
    .command('stats')
    .description('show messages, tokens and context usage of one conversation, or list every conversation')
    .option('--db <path|url>', dbOptionDescription)
    .option('--conversation <id>', 'show this conversation only')
    .option('--user <id>', 'user of --conversation, or whose conversations to list (default: default)')
    .option('--tenant <id>', 'tenant (default: default)')
    .option('--json', 'print JSON instead of a table')
    .action(async (_flags: StatsFlags, command: Command) => {
      await runStats(command.optsWithGlobals<StatsFlags>(), io);
    });
}

async function runStats(flags: StatsFlags, io: CliIo): Promise<void> {
  const config = await loadCliConfig({
    env: io.env,
    cwd: io.cwd,
    ...(flags.config === undefined ? {} : { configPath: flags.config }),
  });
  const db = databaseOf(flags, config, io);
  // Read-only: looking must never create a database or change one.
  const memory = await openMemory({ db, readonly: true });
  try {
    if (flags.conversation !== undefined) {
      const scope = conversationScopeOf(flags, flags.conversation);
      const stats = await requireConversation(memory, scope, db);
      const report = toConversationReport(stats, await memory.listSummaries(scope));
      io.stdout.write(flags.json === true ? `${JSON.stringify(report)}\n` : formatConversation(report));
      return;
    }
    const conversations = await listAllStats(memory, userOf(flags));
    const tenantId = flags.tenant ?? 'default';
    const backlog = await memory.jobBacklog({ tenantId });
    const vectors = await countVectors(db, tenantId);
    const embedder = configuredModel(config);
    if (flags.json === true)
      io.stdout.write(`${JSON.stringify({ db: describeDatabase(db), conversations, backlog, embedder, vectors })}\n`);
    else
      io.stdout.write(
        `${conversations.length === 0 ? `no conversations in ${describeDatabase(db)}\n` : formatConversations(conversations)}\n${formatBacklog(backlog)}${formatVectors(vectors, embedder)}`,
      );
  } finally {
    await memory.close();
  }
}

function toConversationReport(stats: ConversationStats, summaries: readonly Summary[]): ConversationReport {
  const latest = summaries[summaries.length - 1];
  return {
    ...stats,
    summaryCount: summaries.length,
    ...(latest === undefined ? {} : { latestSummaryId: latest.id }),
    netSavedPercent: savedPercent(
      stats.usage.fullHistoryTokens - stats.usage.netSavedTokens,
      stats.usage.fullHistoryTokens,
    ),
  };
}

/** Every conversation of a tenant (default `default`), or of one of its users, with its stats, paging through the store. */
async function listAllStats(
  memory: Memory,
  user: { tenantId?: string; userId?: string },
): Promise<ConversationStats[]> {
  const all: ConversationStats[] = [];
  let cursor: string | undefined;
  do {
    const page = await memory.listConversations(user, { limit: 100, ...(cursor === undefined ? {} : { cursor }) });
    for (const conversation of page.items) {
      const stats = await memory.stats(conversation);
      if (stats !== undefined) all.push(stats);
    }
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return all;
}

function formatConversation(stats: ConversationReport): string {
  const watermark =
    stats.summarizedThroughSeq === 0
      ? 'none summarized yet'
      : `messages 1–${stats.summarizedThroughSeq} summarized (${formatCount(stats.summarizedTokens)} tokens), ${formatCount(stats.messageCount - stats.summarizedThroughSeq)} raw`;
  const rows = [
    ['conversation', stats.conversationId],
    ['user', stats.userId],
    ['tenant', stats.tenantId],
    ['messages', formatCount(stats.messageCount)],
    ['tokens', formatCount(stats.totalTokens)],
    ['first message', stats.firstMessageAt],
    ['last message', stats.lastMessageAt],
    ['watermark', watermark],
    [
      'summaries',
      stats.latestSummaryId === undefined
        ? '0'
        : `${formatCount(stats.summaryCount)} (latest ${stats.latestSummaryId})`,
    ],
    ['context requests', formatCount(stats.usage.requests)],
    ['sent tokens', formatCount(stats.usage.sentTokens)],
    ['full-history tokens', formatCount(stats.usage.fullHistoryTokens)],
    ['saved tokens', `${formatCount(stats.usage.savedTokens)} (${formatPercent(savedShare(stats))})`],
    ['compactions', formatCount(stats.usage.compactions)],
    [
      'summarizer tokens',
      `${formatCount(stats.usage.summarizerInputTokens)} in + ${formatCount(stats.usage.summarizerOutputTokens)} out`,
    ],
    [
      'net saved tokens',
      `${formatCount(stats.usage.netSavedTokens)} (${formatPercent(stats.netSavedPercent)}, after the summarizer's tokens)`,
    ],
  ];
  return formatTable([{ header: 'field' }, { header: 'value' }], rows);
}

// The tenant's stored vectors per model, on a read-only connection of their own (the engine keeps its store to itself).
async function countVectors(db: string, tenantId: string): Promise<EmbeddingCount[]> {
  const store = await openCliStore(db, { readonly: true });
  try {
    return await store.countEmbeddings({ tenantId });
  } finally {
    await store.close();
  }
}

// The configured embedder's model id, or undefined without one (or with one stats cannot build: it only reads).
function configuredModel(config: CliConfig): string | undefined {
  try {
    return chooseEmbedder(config)?.model;
  } catch {
    return undefined;
  }
}

// With a hint when some are not the configured embedder's: recall searches only its own.
function formatVectors(vectors: readonly EmbeddingCount[], embedder: string | undefined): string {
  if (vectors.length === 0) return 'vectors: none stored\n';
  const byModel = vectors.map(({ model, vectors: count }) => `${formatCount(count)} of ${model}`).join(', ');
  const others = vectors.some(({ model }) => model !== embedder);
  return `vectors: ${byModel}${others ? ` (recall searches only the embedder's own, ${embedder ?? 'none'}; \`mnemo reembed\` moves the rest)` : ''}\n`;
}

/** The tenant's background jobs not done yet, per kind, and the wait of the oldest pending one. */
function formatBacklog(backlog: JobBacklogStatus): string {
  const right = 'right' as const;
  const rows = Object.entries(backlog.byKind).map(([kind, counts]) => [
    kind,
    formatCount(counts.pending),
    formatCount(counts.running),
  ]);
  const oldest =
    backlog.oldestPendingAgeMs === undefined
      ? 'none pending'
      : `${(backlog.oldestPendingAgeMs / 1000).toFixed(1)} s (since ${backlog.oldestPendingCreatedAt})`;
  return `${formatTable([{ header: 'background job' }, { header: 'pending', align: right }, { header: 'running', align: right }], rows)}oldest pending job waited: ${oldest}\n`;
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
