import type { Command } from 'commander';
import type { CliIo } from '../cli-io.js';
import { loadCliConfig } from '../config/cli-config.js';
import { formatSummaries } from '../output/format-summaries.js';
import { formatCount } from '../output/format-table.js';
import { openMemory } from '../store/open-memory.js';
import {
  addStoreOptions,
  conversationScopeOf,
  databaseOf,
  requireConversation,
  type StoreFlags,
} from './add-store-options.js';

/** Adds `mnemo summaries <conversation>`: every summary version of a conversation, oldest first. */
export function registerSummariesCommand(program: Command, io: CliIo): void {
  const command = program
    .command('summaries')
    .description('list every summary version of a conversation: range, level, tokens, summarizer, provenance')
    .argument('<conversation>', 'conversation id');
  addStoreOptions(command).action(async (conversationId: string, _flags: StoreFlags, command: Command) => {
    await runSummaries(conversationId, command.optsWithGlobals<StoreFlags>(), io);
  });
}

async function runSummaries(conversationId: string, flags: StoreFlags, io: CliIo): Promise<void> {
  const config = await loadCliConfig({
    env: io.env,
    cwd: io.cwd,
    ...(flags.config === undefined ? {} : { configPath: flags.config }),
  });
  const db = databaseOf(flags, config, io);
  // Read-only: looking must never create a database or change one.
  const memory = await openMemory({ db, readonly: true });
  try {
    const scope = conversationScopeOf(flags, conversationId);
    const conversation = await requireConversation(memory, scope, db);
    const summaries = await memory.listSummaries(scope);
    if (flags.json === true) {
      const { tenantId, userId, messageCount, summarizedThroughSeq } = conversation;
      io.stdout.write(
        `${JSON.stringify({ tenantId, userId, conversationId, messages: messageCount, watermark: summarizedThroughSeq, summaries })}\n`,
      );
      return;
    }
    const heading =
      `${conversationId}: ${formatCount(conversation.messageCount)} messages, ` +
      (conversation.summarizedThroughSeq === 0
        ? 'none summarized yet'
        : `messages 1–${conversation.summarizedThroughSeq} summarized`);
    if (summaries.length === 0) {
      io.stdout.write(`${heading}; no summaries\n`);
      return;
    }
    io.stdout.write(
      `${heading}; ${summaries.length === 1 ? '1 summary version' : `${summaries.length} summary versions`}, oldest first:\n\n${formatSummaries(summaries)}`,
    );
  } finally {
    await memory.close();
  }
}
