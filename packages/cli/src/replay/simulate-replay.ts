import { type Memory, type MessageInput, type UsageTotals } from '@mnemo/core';
import { assembleContext, savedPercent } from '@mnemo/core/internals';
import { contextPolicyOf, usesSummary, type CliPolicy } from '../config/cli-policies.js';

/** What one policy would have cost over a whole replay; `mnemo replay --json` prints these fields. */
export interface PolicyTotals {
  readonly policy: CliPolicy;
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
  /** Summarizer calls made up to the last request (a condensation to the next level is a call); 0 for policies that send no summary. */
  readonly compactions: number;
  /** Prompt tokens of those calls (for the offline summarizer: what the LLM prompt would have cost). */
  readonly summarizerInputTokens: number;
  readonly summarizerOutputTokens: number;
  /** `summarizerInputTokens + summarizerOutputTokens`. */
  readonly summarizerTokens: number;
  /** `fullHistoryTokens − sentTokens − summarizerTokens`: what the policy saved once compaction is paid for. */
  readonly netSavedTokens: number;
  /** `netSavedTokens` as a percent of `fullHistoryTokens`, one decimal; negative when compaction cost more than it saved. */
  readonly netSavedPercent: number;
}

/** Options of {@link simulateReplay}. */
export interface ReplaySimulationOptions {
  /**
   * The memory each policy is built on. Policies may share one; every distinct memory gets every message.
   * A summary policy's compaction settings are its memory's, and its compaction cost is read from that
   * memory's ledger, so two summary policies with different settings need two memories.
   */
  readonly memoryFor: (policy: CliPolicy) => Memory;
  readonly conversationId: string;
  /** Validated messages, oldest first. */
  readonly messages: readonly MessageInput[];
  /** Policies to measure, in report order. */
  readonly policies: readonly CliPolicy[];
  readonly maxTokens: number;
  readonly windowTurns: number;
  readonly system?: string;
  /** Called after each append with the number of messages stored so far. */
  readonly onProgress?: (stored: number) => void;
  readonly signal?: AbortSignal;
}

interface Tally {
  requests: number;
  sentTokens: number;
  fullHistoryTokens: number;
}

type SummarizerUsage = Pick<UsageTotals, 'compactions' | 'summarizerInputTokens' | 'summarizerOutputTokens'>;

const noSummarizerUsage: SummarizerUsage = Object.freeze({
  compactions: 0,
  summarizerInputTokens: 0,
  summarizerOutputTokens: 0,
});

/**
 * Replays a transcript into a conversation the way a bot lives it: appends the messages in order and,
 * before each assistant message, lets pending compaction finish (a live bot's background worker does
 * so between turns; draining keeps the replay deterministic) and builds the context each policy would
 * have sent; returns the totals per policy, with the summarizer calls made up to the last request
 * charged to the policies that send the summary. Throws `budget_exceeded` before storing anything when
 * the system prompt alone does not fit.
 */
export async function simulateReplay(options: ReplaySimulationOptions): Promise<PolicyTotals[]> {
  const { maxTokens, windowTurns, system, signal } = options;
  const memoryOf = new Map(options.policies.map((policy) => [policy, options.memoryFor(policy)]));
  const memories = [...new Set(memoryOf.values())];
  const summaryMemories = [...new Set(options.policies.filter(usesSummary).map((policy) => memoryOf.get(policy)!))];
  // The conversation is its own user, as mnemo serve names a conversation given without one.
  const scope = { userId: options.conversationId, conversationId: options.conversationId };
  const settings = {
    maxTokens,
    windowTurns,
    ...(system === undefined ? {} : { system }),
    ...(signal === undefined ? {} : { signal }),
  };
  // Fails fast on a system prompt over the budget, before the first message is written.
  const counter = memories[0]?.tokenCounter;
  if (counter !== undefined)
    assembleContext({ ...settings, policy: 'full', counter, tail: [], totalMessages: 0, totalTokens: 0 });

  const tallies = new Map<CliPolicy, Tally>(
    options.policies.map((policy) => [policy, { requests: 0, sentTokens: 0, fullHistoryTokens: 0 }]),
  );
  // What each summary memory's compaction had cost when the last request was built.
  const summarizerUsage = new Map<Memory, SummarizerUsage>();
  let stored = 0;
  for (const chunk of chunkAtAssistantMessages(options.messages)) {
    signal?.throwIfAborted();
    if (chunk[0]?.role === 'assistant') {
      for (const memory of memories) await memory.runPendingJobs();
      for (const memory of summaryMemories)
        summarizerUsage.set(memory, (await memory.stats(scope, { signal }))?.usage ?? noSummarizerUsage);
      for (const policy of options.policies) {
        const { report } = await memoryOf
          .get(policy)!
          .buildContext(scope, { ...settings, policy: contextPolicyOf(policy) });
        const tally = tallies.get(policy)!;
        tally.requests += 1;
        tally.sentTokens += report.sentTokens;
        tally.fullHistoryTokens += report.fullHistoryTokens;
      }
    }
    for (const memory of memories) await memory.append(scope, chunk, signal === undefined ? {} : { signal });
    stored += chunk.length;
    options.onProgress?.(stored);
  }
  // A kept replay ends as a live conversation would once its worker caught up: summaries included.
  for (const memory of memories) await memory.runPendingJobs();

  return options.policies.map((policy) => {
    const usage = usesSummary(policy)
      ? (summarizerUsage.get(memoryOf.get(policy)!) ?? noSummarizerUsage)
      : noSummarizerUsage;
    return toPolicyTotals(policy, tallies.get(policy)!, usage, maxTokens, options.messages.length);
  });
}

function toPolicyTotals(
  policy: CliPolicy,
  tally: Tally,
  usage: SummarizerUsage,
  maxTokens: number,
  messages: number,
): PolicyTotals {
  const summarizerTokens = usage.summarizerInputTokens + usage.summarizerOutputTokens;
  return {
    policy,
    maxTokens,
    messages,
    requests: tally.requests,
    sentTokens: tally.sentTokens,
    fullHistoryTokens: tally.fullHistoryTokens,
    savedTokens: tally.fullHistoryTokens - tally.sentTokens,
    savedPercent: savedPercent(tally.sentTokens, tally.fullHistoryTokens),
    compactions: usage.compactions,
    summarizerInputTokens: usage.summarizerInputTokens,
    summarizerOutputTokens: usage.summarizerOutputTokens,
    summarizerTokens,
    netSavedTokens: tally.fullHistoryTokens - tally.sentTokens - summarizerTokens,
    netSavedPercent: savedPercent(tally.sentTokens + summarizerTokens, tally.fullHistoryTokens),
  };
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
