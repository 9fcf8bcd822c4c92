import { basename } from 'node:path';
import { contextPolicies, type ContextPolicy } from '@mnemo/core';
import { Option, type Command } from 'commander';
import type { CliIo } from '../cli-io.js';
import { loadCliConfig, resolvePath } from '../config/cli-config.js';
import { formatCount, formatPercent, formatTable } from '../output/format-table.js';
import { createReplayProgress } from '../output/replay-progress.js';
import { readTranscript } from '../replay/read-transcript.js';
import { simulateReplay, type PolicyTotals } from '../replay/simulate-replay.js';
import { transcriptFormats, type TranscriptFormat } from '../replay/transcript.js';
import { openMemory } from '../store/open-memory.js';
import { parsePositiveInteger } from './parse-positive-integer.js';

interface ReplayFlags {
  readonly format?: TranscriptFormat;
  readonly conversation?: string;
  readonly policy?: ContextPolicy;
  readonly maxTokens?: number;
  readonly windowTurns?: number;
  readonly system?: string;
  readonly db?: string;
  readonly json?: boolean;
  readonly config?: string;
}

/** The policy `--json` reports when none is chosen. */
export const defaultReplayPolicy: ContextPolicy = 'token-window';

/** Adds `mnemo replay <file>`: replays a transcript and reports what each context policy would have sent. */
export function registerReplayCommand(program: Command, io: CliIo): void {
  program
    .command('replay')
    .description('replay a transcript as a bot would live it and report the tokens each context policy sends')
    .argument('<file>', 'transcript: JSONL (one message per line) or a LoCoMo JSON file')
    .addOption(new Option('--format <format>', 'transcript format (default: locomo for .json, else jsonl)').choices(transcriptFormats))
    .option('--conversation <id>', 'LoCoMo sample_id to replay (default: the first)')
    .addOption(new Option('--policy <policy>', `report one policy (default: compare all; ${defaultReplayPolicy} with --json)`).choices(contextPolicies))
    .option('--max-tokens <n>', 'token budget of each request (default: 1000)', parsePositiveInteger)
    .option('--window-turns <n>', 'turns the window policy keeps (default: 4)', parsePositiveInteger)
    .option('--system <text>', 'system prompt pinned in every request')
    .option('--db <path>', 'keep the replay in this SQLite file (default: in memory, discarded)')
    .option('--json', `print one JSON object: ${jsonFields.join(', ')}`)
    .action(async (file: string, _flags: ReplayFlags, command: Command) => {
      await runReplay(file, command.optsWithGlobals<ReplayFlags>(), io);
    });
}

const jsonFields = ['policy', 'maxTokens', 'messages', 'requests', 'sentTokens', 'fullHistoryTokens', 'savedTokens', 'savedPercent'] as const;

async function runReplay(file: string, flags: ReplayFlags, io: CliIo): Promise<void> {
  const config = await loadCliConfig({ env: io.env, cwd: io.cwd, ...(flags.config === undefined ? {} : { configPath: flags.config }) });
  const path = resolvePath(io.cwd, file);
  // Parse the whole file first: a broken line must leave nothing behind in the store.
  const transcript = await readTranscript(path, {
    ...(flags.format === undefined ? {} : { format: flags.format }),
    ...(flags.conversation === undefined ? {} : { conversation: flags.conversation }),
  });
  const chosen = flags.policy ?? config.context.policy;
  const policies: ContextPolicy[] = chosen !== undefined ? [chosen] : flags.json === true ? [defaultReplayPolicy] : [...contextPolicies];
  const system = flags.system ?? config.context.system;
  const db = flags.db === undefined ? ':memory:' : resolvePath(io.cwd, flags.db);
  const conversationId = replayConversationId(transcript.name, flags.db !== undefined);

  const maxTokens = flags.maxTokens ?? config.context.maxTokens;
  const recordedPolicy = chosen ?? defaultReplayPolicy;
  // Compaction is drained by the simulation before each request, so every replay of a file gives the same numbers.
  const memoryOptions = { maxTokens, compaction: 'manual' as const, ...(config.llm.model === undefined ? {} : { model: config.llm.model }) };
  const memory = openMemory({ ...memoryOptions, db });
  // A kept replay records only the policy a bot would use; the others are measured on a discarded copy.
  const needsCopy = db !== ':memory:' && policies.some((policy) => policy !== recordedPolicy);
  const comparisonMemory = needsCopy ? openMemory({ ...memoryOptions, db: ':memory:' }) : memory;
  const progress = createReplayProgress({ total: transcript.messages.length, stream: io.stderr, enabled: flags.json !== true });
  let totals: PolicyTotals[];
  try {
    totals = await simulateReplay({
      memory,
      comparisonMemory,
      conversationId,
      messages: transcript.messages,
      policies,
      recordedPolicy,
      maxTokens,
      windowTurns: flags.windowTurns ?? config.context.windowTurns,
      ...(system === undefined ? {} : { system }),
      onProgress: (stored) => progress.update(stored),
    });
  } finally {
    progress.stop();
    await memory.close();
    if (comparisonMemory !== memory) await comparisonMemory.close();
  }
  if (flags.db !== undefined) io.stderr.write(`mnemo: stored ${transcript.messages.length} messages in ${db} as conversation ${conversationId}\n`);
  if (flags.json === true) {
    const result = totals[0]!;
    io.stdout.write(`${JSON.stringify(Object.fromEntries(jsonFields.map((field) => [field, result[field]])))}\n`);
    return;
  }
  io.stdout.write(formatReplayReport(basename(path), transcript.name, totals, memory.tokenCounter.encoding));
}

/** `replay-<name>` for a discarded in-memory replay; with a timestamp when it is kept, so replays never mix. */
function replayConversationId(name: string, persisted: boolean): string {
  const safeName = name.replace(/[^A-Za-z0-9._-]+/g, '-').slice(0, 120) || 'transcript';
  if (!persisted) return `replay-${safeName}`;
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('.', '');
  return `replay-${safeName}-${stamp}`;
}

function formatReplayReport(fileName: string, name: string, totals: readonly PolicyTotals[], encoding: string): string {
  const first = totals[0]!;
  const title = name === fileName || fileName.startsWith(`${name}.`) ? fileName : `${fileName} (${name})`;
  const heading =
    `replay of ${title}: ${formatCount(first.messages)} messages, ${formatCount(first.requests)} requests, ` +
    `budget ${formatCount(first.maxTokens)} tokens per request (${encoding})\n\n`;
  const columns = [
    { header: 'policy' },
    { header: 'requests', align: 'right' as const },
    { header: 'sent tokens', align: 'right' as const },
    { header: 'full history', align: 'right' as const },
    { header: 'saved tokens', align: 'right' as const },
    { header: 'saved', align: 'right' as const },
  ];
  const rows = totals.map((total) => [
    total.policy,
    formatCount(total.requests),
    formatCount(total.sentTokens),
    formatCount(total.fullHistoryTokens),
    formatCount(total.savedTokens),
    formatPercent(total.savedPercent),
  ]);
  return heading + formatTable(columns, rows);
}
