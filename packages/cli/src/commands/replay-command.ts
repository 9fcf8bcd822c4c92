import { basename } from 'node:path';
import type { Memory } from '@mnemo/core';
import { Option, type Command } from 'commander';
import type { CliIo } from '../cli-io.js';
import { cliDefaults, loadCliConfig, resolveDatabase, resolvePath } from '../config/cli-config.js';
import { cliPolicies, usesSummary, type CliPolicy } from '../config/cli-policies.js';
import { formatCount, formatPercent, formatTable } from '../output/format-table.js';
import { createReplayProgress } from '../output/replay-progress.js';
import { readTranscript } from '../replay/read-transcript.js';
import { simulateReplay, type PolicyTotals } from '../replay/simulate-replay.js';
import { transcriptFormats, type TranscriptFormat } from '../replay/transcript.js';
import { describeDatabase } from '../store/open-cli-store.js';
import { openMemory } from '../store/open-memory.js';
import { parsePositiveInteger } from './parse-positive-integer.js';

interface ReplayFlags {
  readonly format?: TranscriptFormat;
  readonly conversation?: string;
  readonly lenient?: boolean;
  readonly policy?: CliPolicy;
  readonly maxTokens?: number;
  readonly windowTurns?: number;
  readonly system?: string;
  readonly db?: string;
  readonly json?: boolean;
  readonly config?: string;
}

/** The policy `--json` reports when none is chosen. */
export const defaultReplayPolicy: CliPolicy = 'token-window';

/** Adds `mnemo replay <file>`: replays a transcript and reports what each context policy would have sent. */
export function registerReplayCommand(program: Command, io: CliIo): void {
  program
    .command('replay')
    .description('replay a transcript as a bot would live it and report the tokens each context policy sends')
    .argument('<file>', 'transcript: JSONL (one message per line) or a LoCoMo JSON file')
    .addOption(
      new Option('--format <format>', 'transcript format (default: locomo for .json, else jsonl)').choices(
        transcriptFormats,
      ),
    )
    .option('--conversation <id>', 'LoCoMo sample_id to replay (default: the first)')
    .option(
      '--lenient',
      'LoCoMo: date a session whose date cannot be read by session order, with a warning, instead of refusing the file',
    )
    .addOption(
      new Option(
        '--policy <policy>',
        `report one policy (default: compare all; ${defaultReplayPolicy} with --json); meshai = summary with the meshai compaction preset`,
      ).choices(cliPolicies),
    )
    .option(
      '--max-tokens <n>',
      `token budget of each request (default: ${cliDefaults.maxTokens})`,
      parsePositiveInteger,
    )
    .option('--window-turns <n>', 'turns the window policy keeps (default: 4)', parsePositiveInteger)
    .option('--system <text>', 'system prompt pinned in every request')
    .option(
      '--db <path|url>',
      'keep the replay in this SQLite file or postgres:// store (default: in memory, discarded)',
    )
    .option('--json', `print one JSON object: ${replayJsonFields.join(', ')}`)
    .action(async (file: string, _flags: ReplayFlags, command: Command) => {
      await runReplay(file, command.optsWithGlobals<ReplayFlags>(), io);
    });
}

/**
 * Fields of `mnemo replay --json`, in print order. The first eight are the original contract; the last
 * four were added with compaction (summarizer calls and tokens up to the last request, and the savings
 * net of them) and are 0 / equal to the gross savings for policies that send no summary.
 */
export const replayJsonFields = [
  'policy',
  'maxTokens',
  'messages',
  'requests',
  'sentTokens',
  'fullHistoryTokens',
  'savedTokens',
  'savedPercent',
  'compactions',
  'summarizerTokens',
  'netSavedTokens',
  'netSavedPercent',
] as const;

async function runReplay(file: string, flags: ReplayFlags, io: CliIo): Promise<void> {
  const config = await loadCliConfig({
    env: io.env,
    cwd: io.cwd,
    ...(flags.config === undefined ? {} : { configPath: flags.config }),
  });
  const path = resolvePath(io.cwd, file);
  // Parse the whole file first: a broken line must leave nothing behind in the store.
  const transcript = await readTranscript(path, {
    ...(flags.format === undefined ? {} : { format: flags.format }),
    ...(flags.conversation === undefined ? {} : { conversation: flags.conversation }),
    lenient: flags.lenient === true,
  });
  for (const warning of transcript.warnings ?? []) io.stderr.write(`mnemo replay: warning: ${warning}\n`);
  const chosen = flags.policy ?? config.context.policy;
  const policies: CliPolicy[] =
    chosen !== undefined ? [chosen] : flags.json === true ? [defaultReplayPolicy] : [...cliPolicies];
  const system = flags.system ?? config.context.system;
  const db = flags.db === undefined ? ':memory:' : resolveDatabase(io.cwd, flags.db);
  const conversationId = replayConversationId(transcript.name, flags.db !== undefined);
  const maxTokens = flags.maxTokens ?? config.context.maxTokens;
  const recordedPolicy = chosen ?? defaultReplayPolicy;
  // Replays always summarize offline (the engine's default summarizer), so the same file gives the same
  // numbers; compaction is drained by the simulation before each request, never in the background.
  const memoryOptions = {
    maxTokens,
    compaction: 'manual' as const,
    ...(config.llm.model === undefined ? {} : { model: config.llm.model }),
  };
  const memory = await openMemory({ ...memoryOptions, db, policy: recordedPolicy });
  // A kept replay records only the policy a bot would use; the others are measured on discarded copies.
  // Compaction state depends on the settings, so meshai (its own preset) never shares a memory with the
  // budget-scaled policies; the policies that send no summary are indifferent to it.
  const comparisonMemories = new Map<string, Memory>();
  const settingsOf = (policy: CliPolicy) => (policy === 'meshai' ? 'meshai' : 'budget');
  const openMemoryFor = async (policy: CliPolicy): Promise<Memory> => {
    if (policy === recordedPolicy || (db === ':memory:' && settingsOf(policy) === settingsOf(recordedPolicy)))
      return memory;
    let comparison = comparisonMemories.get(settingsOf(policy));
    if (comparison === undefined) {
      comparison = await openMemory({ ...memoryOptions, db: ':memory:', policy });
      comparisonMemories.set(settingsOf(policy), comparison);
    }
    return comparison;
  };
  const progress = createReplayProgress({
    total: transcript.messages.length,
    stream: io.stderr,
    enabled: flags.json !== true,
  });
  let totals: PolicyTotals[];
  try {
    const memories = new Map<CliPolicy, Memory>();
    for (const policy of policies) memories.set(policy, await openMemoryFor(policy));
    totals = await simulateReplay({
      memoryFor: (policy) => memories.get(policy)!,
      conversationId,
      messages: transcript.messages,
      policies,
      maxTokens,
      windowTurns: flags.windowTurns ?? config.context.windowTurns,
      ...(system === undefined ? {} : { system }),
      onProgress: (stored) => progress.update(stored),
    });
  } finally {
    progress.stop();
    await memory.close();
    for (const comparison of comparisonMemories.values()) await comparison.close();
  }
  if (flags.db !== undefined)
    io.stderr.write(
      `mnemo: stored ${transcript.messages.length} messages in ${describeDatabase(db)} as conversation ${conversationId}\n`,
    );
  if (flags.json === true) {
    const result = totals[0]!;
    io.stdout.write(`${JSON.stringify(Object.fromEntries(replayJsonFields.map((field) => [field, result[field]])))}\n`);
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
  const right = 'right' as const;
  const columns = [
    { header: 'policy' },
    { header: 'requests', align: right },
    { header: 'sent tokens', align: right },
    { header: 'full history', align: right },
    { header: 'saved tokens', align: right },
    { header: 'saved', align: right },
    { header: 'compactions', align: right },
    { header: 'summarizer tokens', align: right },
    { header: 'net saved', align: right },
  ];
  const rows = totals.map((total) => [
    total.policy,
    formatCount(total.requests),
    formatCount(total.sentTokens),
    formatCount(total.fullHistoryTokens),
    formatCount(total.savedTokens),
    formatPercent(total.savedPercent),
    formatCount(total.compactions),
    formatCount(total.summarizerTokens),
    formatPercent(total.netSavedPercent),
  ]);
  const notes = totals.some((total) => usesSummary(total.policy))
    ? '\nnet saved = (full history − sent − summarizer input − summarizer output) / full history. Summarizer tokens are what\n' +
      'the compaction prompts and summaries up to the last request cost (the replay summarizes offline and counts the\n' +
      'prompt an LLM summarizer would get). meshai = summary with the meshai preset: last 4 exchanges verbatim, re-summarized every 8 messages.\n'
    : '';
  return heading + formatTable(columns, rows) + notes;
}
