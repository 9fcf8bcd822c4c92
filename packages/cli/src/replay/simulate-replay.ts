import { assembleContext, savedPercent, type ContextPolicy, type Memory, type MessageInput } from '@mnemo/core';

/** What one policy would have cost over a whole replay; the shape `mnemo replay --json` prints. */
export interface PolicyTotals {
  readonly policy: ContextPolicy;
  readonly maxTokens: number;
  /** Messages replayed. */
  readonly messages: number;
  /** Requests simulated: one before each assistant message. */
  readonly requests: number;
  readonly sentTokens: number;
  readonly fullHistoryTokens: number;
  readonly savedTokens: number;
  /** 0–100, one decimal. */
  readonly savedPercent: number;
}

/** Options of {@link simulateReplay}. */
export interface ReplaySimulationOptions {
  /** Where the replay is stored and the recorded policy is built, as the bot would, into the usage ledger. */
  readonly memory: Memory;
  /**
   * Where the other policies are measured, fed the same messages; default `memory` itself (their
   * builds then land in its ledger too, which is harmless for a discarded in-memory replay).
   */
  readonly comparisonMemory?: Memory;
  readonly conversationId: string;
  /** Validated messages, oldest first. */
  readonly messages: readonly MessageInput[];
  /** Policies to measure, in report order. */
  readonly policies: readonly ContextPolicy[];
  /** Default: the first of `policies`. */
  readonly recordedPolicy?: ContextPolicy;
  readonly maxTokens: number;
  readonly windowTurns: number;
  readonly system?: string;
  /** Called after each append with the number of messages stored so far. */
  readonly onProgress?: (stored: number) => void;
  readonly signal?: AbortSignal;
}

/**
 * Replays a transcript into a conversation the way a bot lives it: appends the messages in order and,
 * before each assistant message, lets pending compaction finish (a live bot's background worker does
 * so between turns; draining keeps the replay deterministic) and builds the context each policy would
 * have sent; returns the totals per policy. Throws `budget_exceeded` before storing anything when the
 * system prompt alone does not fit.
 */
export async function simulateReplay(options: ReplaySimulationOptions): Promise<PolicyTotals[]> {
  const { memory, maxTokens, windowTurns, system, signal } = options;
  const comparisonMemory = options.comparisonMemory ?? memory;
  const memories = comparisonMemory === memory ? [memory] : [memory, comparisonMemory];
  const recordedPolicy = options.recordedPolicy ?? options.policies[0] ?? 'token-window';
  const scope = { conversationId: options.conversationId };
  const settings = { maxTokens, windowTurns, ...(system === undefined ? {} : { system }), ...(signal === undefined ? {} : { signal }) };
  // Fails fast on a system prompt over the budget, before the first message is written.
  assembleContext({ ...settings, policy: recordedPolicy, counter: memory.tokenCounter, tail: [], totalMessages: 0, totalTokens: 0 });

  const totals = new Map(options.policies.map((policy) => [policy, { requests: 0, sentTokens: 0, fullHistoryTokens: 0 }]));
  let stored = 0;
  for (const chunk of chunkAtAssistantMessages(options.messages)) {
    signal?.throwIfAborted();
    if (chunk[0]?.role === 'assistant') {
      for (const target of memories) await target.runPendingJobs();
      for (const policy of options.policies) {
        const target = policy === recordedPolicy ? memory : comparisonMemory;
        const { report } = await target.buildContext(scope, { ...settings, policy });
        const sum = totals.get(policy)!;
        sum.requests += 1;
        sum.sentTokens += report.sentTokens;
        sum.fullHistoryTokens += report.fullHistoryTokens;
      }
    }
    for (const target of memories) await target.append(scope, chunk, signal === undefined ? {} : { signal });
    stored += chunk.length;
    options.onProgress?.(stored);
  }
  // A kept replay ends as a live conversation would once its worker caught up: summaries included.
  await memory.runPendingJobs();

  return options.policies.map((policy) => {
    const sum = totals.get(policy)!;
    return {
      policy,
      maxTokens,
      messages: options.messages.length,
      requests: sum.requests,
      sentTokens: sum.sentTokens,
      fullHistoryTokens: sum.fullHistoryTokens,
      savedTokens: sum.fullHistoryTokens - sum.sentTokens,
      savedPercent: savedPercent(sum.sentTokens, sum.fullHistoryTokens),
    };
  });
}

/**
 * Splits messages into runs that each start at an assistant message (the first run may not): a run is
 * appended in one transaction, and a request is simulated just before each run that starts with one.
 */
function chunkAtAssistantMessages(messages: readonly MessageInput[]): MessageInput[][] {
  const chunks: MessageInput[][] = [];
  for (const message of messages) {
    const current = chunks[chunks.length - 1];
    if (current === undefined || message.role === 'assistant') chunks.push([message]);
    else current.push(message);
  }
  return chunks;
}
