import { createInterface } from 'node:readline';
import {
  isMemoryError,
  toOpenAiMessages,
  type ContextPolicy,
  type ContextReport,
  type Memory,
  type RecallMode,
} from '@mnemo/core';
import { assembleContext } from '@mnemo/core/internals';
import type { ChatUsage, OpenAiChatModel } from '@mnemo/models';
import type { CliIo } from '../cli-io.js';
import { formatCount, formatPercent } from '../output/format-table.js';

/** Options of {@link runChat}. */
export interface RunChatOptions {
  readonly memory: Memory;
  readonly model: OpenAiChatModel;
  readonly conversationId: string;
  readonly policy?: ContextPolicy;
  readonly maxTokens: number;
  readonly windowTurns: number;
  /** When the hybrid policy recalls (`MNEMO_RECALL`); default the engine's. */
  readonly recall?: RecallMode;
  readonly system?: string;
  readonly io: CliIo;
}

/** Lines that end an interactive chat, besides end of input. */
const exitCommands = new Set(['/exit', '/quit']);

/**
 * Runs a chat over `io.stdin`, one user line per turn, until end of input or `/exit`: stores the user's
 * turn, builds the context with mnemo, prints its token report to stderr, asks the model, stores and
 * prints the reply. A model failure is printed and the chat goes on (the user's turn stays stored);
 * a storage failure ends it by throwing. On a terminal it prompts; piped, it prints only the replies.
 */
export async function runChat(options: RunChatOptions): Promise<void> {
  const { io, model } = options;
  checkSystemPromptFits(options);
  const interactive = io.stdin.isTTY === true;
  const lines = createInterface({
    input: io.stdin,
    ...(interactive ? { output: io.stdout, terminal: true } : { terminal: false }),
  });
  const controller = new AbortController();
  // Ctrl-C on a terminal: abandon the call in flight and leave the loop.
  lines.on('SIGINT', () => {
    controller.abort();
    lines.close();
  });
  // The conversation is its own user, as mnemo serve names a conversation given without one.
  const scope = { userId: options.conversationId, conversationId: options.conversationId };
  if (interactive) {
    io.stderr.write(
      `mnemo: chatting with ${model.model} as conversation ${options.conversationId}; /exit or Ctrl-D to leave\n`,
    );
    lines.setPrompt('you> ');
    lines.prompt();
  }
  for await (const line of lines) {
    const text = line.trim();
    if (exitCommands.has(text)) break;
    if (text.length > 0) await chatTurn(options, scope, text, controller.signal);
    if (controller.signal.aborted) break;
    if (interactive) lines.prompt();
  }
  lines.close();
}

async function chatTurn(
  options: RunChatOptions,
  scope: { userId: string; conversationId: string },
  text: string,
  signal: AbortSignal,
): Promise<void> {
  const { io, memory, model } = options;
  await memory.append(scope, { role: 'user', content: text }, { signal });
  const context = await memory.buildContext(scope, {
    maxTokens: options.maxTokens,
    windowTurns: options.windowTurns,
    signal,
    ...(options.recall === undefined ? {} : { recall: options.recall }),
    ...(options.policy === undefined ? {} : { policy: options.policy }),
    ...(options.system === undefined ? {} : { system: options.system }),
  });
  io.stderr.write(`${formatContextReport(context.report)}\n`);
  let reply: { content: string; usage?: ChatUsage };
  try {
    reply = await model.complete(toOpenAiMessages(context.messages), { signal });
  } catch (error) {
    if (signal.aborted) return;
    if (!isMemoryError(error)) throw error;
    io.stderr.write(`mnemo: ${error.message}\n`);
    return;
  }
  await memory.append(scope, { role: 'assistant', content: reply.content }, { signal });
  io.stdout.write(io.stdin.isTTY === true ? `${model.model}> ${reply.content}\n` : `${reply.content}\n`);
  if (reply.usage !== undefined) {
    io.stderr.write(
      `[usage] the provider counted ${formatCount(reply.usage.promptTokens)} prompt + ${formatCount(reply.usage.completionTokens)} completion tokens\n`,
    );
  }
}

/** Throws `budget_exceeded` before the first prompt when the system prompt alone is over the budget. */
function checkSystemPromptFits(options: RunChatOptions): void {
  assembleContext({
    policy: options.policy ?? 'token-window',
    maxTokens: options.maxTokens,
    windowTurns: options.windowTurns,
    ...(options.system === undefined ? {} : { system: options.system }),
    counter: options.memory.tokenCounter,
    tail: [],
    totalMessages: 0,
    totalTokens: 0,
  });
}

/** One line about a built context: what it sends against the full history, e.g. `[context] sent 120 / full 480 tokens, saved 75.0% (token-window, budget 1,000)`. */
export function formatContextReport(report: ContextReport): string {
  return (
    `[context] sent ${formatCount(report.sentTokens)} / full ${formatCount(report.fullHistoryTokens)} tokens, ` +
    `saved ${formatPercent(report.savedPercent)} (${report.policy}, budget ${formatCount(report.maxTokens)})`
  );
}
