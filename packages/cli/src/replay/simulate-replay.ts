import { assembleContext, savedPercent, type ContextPolicy, type ContextReport, type Memory, type Message, type MessageInput } from '@mnemo/core';

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
  readonly memory: Memory;
  readonly conversationId: string;
  /** Validated messages, oldest first. */
  readonly messages: readonly MessageInput[];
  /** Policies to measure, in report order. */
  readonly policies: readonly ContextPolicy[];
  /**
   * The policy built through `memory.buildContext`, as the bot would, so it lands in the usage ledger;
   * the others are assembled from the same stored messages without being recorded. Default: the first.
   */
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
 * before each assistant message, builds the context each policy would have sent; returns the totals per
 * policy. Throws `budget_exceeded` before storing anything when the system prompt alone does not fit.
 */
export async function simulateReplay(options: ReplaySimulationOptions): Promise<PolicyTotals[]> {
  const { memory, maxTokens, windowTurns, system } = options;
  const recordedPolicy = options.recordedPolicy ?? options.policies[0] ?? 'token-window';
  const scope = { conversationId: options.conversationId };
  const settings = { maxTokens, windowTurns, ...(system === undefined ? {} : { system }) };
  // Fails fast on a system prompt over the budget, before the first message is written.
  assembleContext({ ...settings, policy: recordedPolicy, counter: memory.tokenCounter, tail: [], totalMessages: 0, totalTokens: 0 });

  const totals = new Map(options.policies.map((policy) => [policy, { requests: 0, sentTokens: 0, fullHistoryTokens: 0 }]));
  const stored: Message[] = [];
  let storedTokens = 0;
  const measure = async (policy: ContextPolicy): Promise<ContextReport> => {
    if (policy === recordedPolicy) {
      return (await memory.buildContext(scope, { ...settings, policy, ...(options.signal === undefined ? {} : { signal: options.signal }) })).report;
    }
    const input = { ...settings, policy, counter: memory.tokenCounter, tail: stored, totalMessages: stored.length, totalTokens: storedTokens };
    return assembleContext(input).report;
  };

  for (const chunk of chunkAtAssistantMessages(options.messages)) {
    options.signal?.throwIfAborted();
    if (chunk[0]?.role === 'assistant') {
      for (const policy of options.policies) {
        const report = await measure(policy);
        const sum = totals.get(policy)!;
        sum.requests += 1;
        sum.sentTokens += report.sentTokens;
        sum.fullHistoryTokens += report.fullHistoryTokens;
      }
    }
    const appended = await memory.append(scope, chunk, { ...(options.signal === undefined ? {} : { signal: options.signal }) });
    // A repeated idempotency key returns the message stored earlier: count only what is new.
    const lastSeq = stored[stored.length - 1]?.seq ?? 0;
    const fresh = appended.filter((message) => message.seq > lastSeq);
    stored.push(...fresh);
    storedTokens += fresh.reduce((sum, message) => sum + message.tokens, 0);
    options.onProgress?.(stored.length);
  }

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
