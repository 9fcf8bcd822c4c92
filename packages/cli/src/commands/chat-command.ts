import { MemoryError } from '@mnemo/core';
import { createOpenAiChatModel } from '@mnemo/models';
import { Option, type Command } from 'commander';
import { runChat } from '../chat/run-chat.js';
import type { CliIo } from '../cli-io.js';
import { cliDefaults, defaultConfigFileName, loadCliConfig, type CliConfig } from '../config/cli-config.js';
import { cliPolicies, contextPolicyOf, type CliPolicy } from '../config/cli-policies.js';
import { chooseSummarizer } from '../store/choose-summarizer.js';
import { openMemory } from '../store/open-memory.js';
import { chooseEmbedder, chooseRefiner, oneUserQueryDeadline } from '../store/choose-embedder.js';
import { databaseOf, dbOptionDescription } from './add-store-options.js';
import { parsePositiveInteger } from './parse-positive-integer.js';

interface ChatFlags {
  readonly db?: string;
  readonly conversation: string;
  readonly policy?: CliPolicy;
  readonly maxTokens?: number;
  readonly system?: string;
  readonly config?: string;
}

/** The conversation `mnemo chat` continues when none is named, so successive chats share one memory. */
export const defaultChatConversationId = 'chat';

/** Adds `mnemo chat`: an interactive chat with an OpenAI-compatible model, with every turn stored (SQLite or PostgreSQL). */
export function registerChatCommand(program: Command, io: CliIo): void {
  program
    .command('chat')
    .description(
      'chat with an OpenAI-compatible model; mnemo stores every turn and builds each request under the budget',
    )
    .option('--db <path|url>', dbOptionDescription)
    .option('--conversation <id>', 'conversation to continue', defaultChatConversationId)
    .addOption(
      new Option(
        '--policy <policy>',
        "context policy (default: the engine's default, hybrid); meshai = summary with the meshai compaction preset",
      ).choices(cliPolicies),
    )
    .option(
      '--max-tokens <n>',
      `token budget of each request (default: ${cliDefaults.maxTokens})`,
      parsePositiveInteger,
    )
    .option('--system <text>', 'system prompt pinned in every request')
    .action(async (_flags: ChatFlags, command: Command) => {
      await runChatCommand(command.optsWithGlobals<ChatFlags>(), io);
    });
}

async function runChatCommand(flags: ChatFlags, io: CliIo): Promise<void> {
  const config = await loadCliConfig({
    env: io.env,
    cwd: io.cwd,
    ...(flags.config === undefined ? {} : { configPath: flags.config }),
  });
  // Check the endpoint before opening anything, so a missing setting never leaves a prompt or a file behind.
  const { baseUrl, model } = requireEndpoint(config);
  const chatModel = createOpenAiChatModel({
    baseUrl,
    model,
    timeoutMs: config.llm.timeoutMs,
    ...(config.llm.apiKey === undefined ? {} : { apiKey: config.llm.apiKey }),
  });
  const policy = flags.policy ?? config.context.policy;
  const system = flags.system ?? config.context.system;
  const maxTokens = flags.maxTokens ?? config.context.maxTokens;
  // Compaction summarizes with the same endpoint and model as the chat (falling back to the offline summarizer).
  const summarizer = chooseSummarizer(config);
  const embedder = chooseEmbedder(config);
  const refiner = chooseRefiner(config, { runsJobs: true });
  const memory = await openMemory({
    ...(embedder === undefined ? {} : { embedder }),
    ...(refiner.refiner === undefined ? {} : { refiner: refiner.refiner }),
    queryEmbeddingTimeoutMs: oneUserQueryDeadline(config, refiner.refiner !== undefined),
    onQueryEmbeddingError: (error) =>
      io.stderr.write(
        `mnemo: query embedding failed, recalling keyword-only: ${error instanceof Error ? error.message : String(error)}\n`,
      ),
    db: databaseOf(flags, config, io),
    model,
    maxTokens,
    ...(policy === undefined ? {} : { policy }),
    ...(summarizer.create === undefined ? {} : { createSummarizer: summarizer.create }),
    // Compaction runs in the background; a failure leaves the history raw and the chat going.
    onJobError: (error) =>
      io.stderr.write(`mnemo: background job failed: ${error instanceof Error ? error.message : String(error)}\n`),
  });
  try {
    await runChat({
      memory,
      model: chatModel,
      conversationId: flags.conversation,
      maxTokens,
      windowTurns: config.context.windowTurns,
      recall: config.context.recall,
      io,
      ...(policy === undefined ? {} : { policy: contextPolicyOf(policy) }),
      ...(system === undefined ? {} : { system }),
    });
  } finally {
    await memory.close();
    await refiner.close();
  }
}

function requireEndpoint(config: CliConfig): { baseUrl: string; model: string } {
  const { baseUrl, model } = config.llm;
  if (baseUrl !== undefined && model !== undefined) return { baseUrl, model };
  const missing = [
    ...(baseUrl === undefined ? ['MNEMO_LLM_BASE_URL (e.g. http://localhost:11434/v1)'] : []),
    ...(model === undefined ? ['MNEMO_LLM_MODEL (e.g. llama3.2)'] : []),
  ];
  const fields = [...(baseUrl === undefined ? ['llm.baseUrl'] : []), ...(model === undefined ? ['llm.model'] : [])];
  throw new MemoryError(
    'invalid_input',
    `chat needs an OpenAI-compatible endpoint. Set ${missing.join(' and ')}, plus MNEMO_LLM_API_KEY if it needs a key ` +
      `(or ${fields.join(' and ')} in ${defaultConfigFileName})`,
    { details: { missing: fields } },
  );
}
