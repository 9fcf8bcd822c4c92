import { Option, type Command } from 'commander';
import type { CliIo } from '../cli-io.js';
import { cliDefaults, loadCliConfig } from '../config/cli-config.js';
import { cliPolicies, type CliPolicy } from '../config/cli-policies.js';
import { formatSeqRange, formatSummaries } from '../output/format-summaries.js';
import { formatCount } from '../output/format-table.js';
import { chooseSummarizer } from '../store/choose-summarizer.js';
import { openMemory } from '../store/open-memory.js';
import {
  addStoreOptions,
  conversationScopeOf,
  databaseOf,
  requireConversation,
  type StoreFlags,
} from './add-store-options.js';
import { parsePositiveInteger } from './parse-positive-integer.js';

interface CompactFlags extends StoreFlags {
  readonly policy?: CliPolicy;
  readonly maxTokens?: number;
}

/** Adds `mnemo compact <conversation>`: folds a conversation's raw turns into its rolling summary now. */
export function registerCompactCommand(program: Command, io: CliIo): void {
  const command = program
    .command('compact')
    .description(
      'compact a conversation now: fold all but its newest turns into the rolling summary, and print what was written',
    )
    .argument('<conversation>', 'conversation id');
  addStoreOptions(command)
    .addOption(
      new Option(
        '--policy <policy>',
        'compaction settings of this policy: meshai = the meshai preset, else scaled to --max-tokens',
      ).choices(cliPolicies),
    )
    .option(
      '--max-tokens <n>',
      `context budget the thresholds are scaled to (default: ${cliDefaults.maxTokens})`,
      parsePositiveInteger,
    )
    .action(async (conversationId: string, _flags: CompactFlags, command: Command) => {
      await runCompact(conversationId, command.optsWithGlobals<CompactFlags>(), io);
    });
}

async function runCompact(conversationId: string, flags: CompactFlags, io: CliIo): Promise<void> {
  const config = await loadCliConfig({
    env: io.env,
    cwd: io.cwd,
    ...(flags.config === undefined ? {} : { configPath: flags.config }),
  });
  const db = databaseOf(flags, config, io);
  const policy = flags.policy ?? config.context.policy;
  const summarizer = chooseSummarizer(config);
  // Compaction runs here, in the command, and nowhere else: no background worker.
  const memory = await openMemory({
    db,
    mustExist: true,
    compaction: 'manual',
    maxTokens: flags.maxTokens ?? config.context.maxTokens,
    ...(policy === undefined ? {} : { policy }),
    ...(config.llm.model === undefined ? {} : { model: config.llm.model }),
    ...(summarizer.create === undefined ? {} : { createSummarizer: summarizer.create }),
  });
  try {
    const scope = conversationScopeOf(flags, conversationId);
    const before = await requireConversation(memory, scope, db);
    const written = await memory.compact(scope);
    const after = (await memory.stats(scope)) ?? before;
    if (flags.json === true) {
      const { tenantId, userId } = before;
      const watermark = { before: before.summarizedThroughSeq, after: after.summarizedThroughSeq };
      io.stdout.write(
        `${JSON.stringify({ tenantId, userId, conversationId, messages: after.messageCount, watermark, summaries: written })}\n`,
      );
      return;
    }
    io.stdout.write(`summarizer: ${summarizer.description}\n`);
    if (written.length === 0) {
      io.stdout.write(
        `nothing to compact in ${conversationId}: ${formatCount(after.messageCount)} messages, messages 1–${after.summarizedThroughSeq} already summarized; ` +
          'the newest turns always stay verbatim\n',
      );
      return;
    }
    const summarized = `messages ${formatSeqRange(1, after.summarizedThroughSeq)} now summarized`;
    io.stdout.write(
      `compacted ${conversationId}: watermark ${before.summarizedThroughSeq} → ${after.summarizedThroughSeq} (${summarized}, ` +
        `${formatCount(after.messageCount - after.summarizedThroughSeq)} newest stay verbatim); ` +
        `${written.length === 1 ? '1 summary' : `${written.length} summaries`} written:\n\n${formatSummaries(written)}`,
    );
  } finally {
    await memory.close();
  }
}
