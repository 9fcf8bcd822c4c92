import { performance } from 'node:perf_hooks';
import { createMemory, maxContextTokens, type ContextPolicy, type MessageInput } from '@mnemo/core';
import { savedPercent } from '@mnemo/core/internals';
import { InMemoryStore } from '@mnemo/core/testing';

/** Settings of one replay: the budget of the windowed policies, the window size and the bot's system prompt. */
export interface ReplaySettings {
  /** Budget of `window` and `token-window`, in tokens; `full` runs without one (see {@link budgetOf}). */
  readonly maxTokens: number;
  readonly windowTurns: number;
  readonly system: string;
}

/** What one policy cost over a whole replay. Tokens are in the engine's encoding; latency in µs. */
export interface PolicyCost {
  /** Context builds, one before each assistant message. */
  readonly requests: number;
  readonly meanTokensPerRequest: number;
  readonly lastRequestTokens: number;
  readonly totalSentTokens: number;
  /** What the same requests cost carrying the whole history each time (the bot as it is today). */
  readonly totalFullHistoryTokens: number;
  /** `totalSentTokens` saved against `totalFullHistoryTokens`, 0–100 with one decimal. */
  readonly savedPercent: number;
  /** Mean wall time of one `memory.buildContext` call, store reads and ledger write included. */
  readonly meanLatencyMicroseconds: number;
}

/**
 * The policies the benchmark compares, in table order. A fixed list rather than core's `contextPolicies`,
 * so a policy added to the core joins the tables deliberately, with the setup it needs.
 */
export const replayPolicies = ['full', 'window', 'token-window'] as const satisfies readonly ContextPolicy[];

/** One of {@link replayPolicies}. */
export type ReplayPolicy = (typeof replayPolicies)[number];

/** The result of replaying one conversation: its message count and the cost of each policy. */
export interface ReplayResult {
  readonly messages: number;
  readonly encoding: string;
  readonly policies: Readonly<Record<ReplayPolicy, PolicyCost>>;
}

/**
 * The budget a policy gets. `full` is the baseline, the bot resending its whole history, so it runs with
 * the largest budget the core accepts: core's `full` honours `maxTokens` (it keeps the newest messages
 * that fit), and with the benchmark's budget it would be a message-grained token window, not the baseline.
 */
export function budgetOf(policy: ContextPolicy, settings: ReplaySettings): number {
  return policy === 'full' ? maxContextTokens : settings.maxTokens;
}

interface Tally {
  requests: number;
  sentTokens: number;
  fullHistoryTokens: number;
  lastRequestTokens: number;
  latencyMs: number;
}

/**
 * Replays a conversation as the bot lives it: appends the messages one by one into a fresh in-memory
 * engine and, before each assistant message, builds the context it would send under every policy.
 */
export async function replayTokenCosts(
  conversation: readonly MessageInput[],
  settings: ReplaySettings,
): Promise<ReplayResult> {
  // No compaction: these policies never read a summary, and a background worker would only add noise to the latencies.
  const memory = createMemory({ store: new InMemoryStore(), compaction: false });
  const scope = { conversationId: 'bench-node' };
  const tallies = new Map<ReplayPolicy, Tally>(
    replayPolicies.map((policy) => [
      policy,
      { requests: 0, sentTokens: 0, fullHistoryTokens: 0, lastRequestTokens: 0, latencyMs: 0 },
    ]),
  );
  for (const message of conversation) {
    if (message.role === 'assistant') {
      for (const policy of replayPolicies) {
        const tally = tallies.get(policy)!;
        const started = performance.now();
        const { report } = await memory.buildContext(scope, {
          policy,
          maxTokens: budgetOf(policy, settings),
          windowTurns: settings.windowTurns,
          system: settings.system,
        });
        tally.latencyMs += performance.now() - started;
        tally.requests += 1;
        tally.sentTokens += report.sentTokens;
        tally.fullHistoryTokens += report.fullHistoryTokens;
        tally.lastRequestTokens = report.sentTokens;
      }
    }
    await memory.append(scope, message);
  }
  await memory.close();
  const policies = Object.fromEntries(replayPolicies.map((policy) => [policy, toPolicyCost(tallies.get(policy)!)]));
  return {
    messages: conversation.length,
    encoding: memory.tokenCounter.encoding,
    policies: policies as Record<ReplayPolicy, PolicyCost>,
  };
}

function toPolicyCost(tally: Tally): PolicyCost {
  const perRequest = (total: number) => (tally.requests === 0 ? 0 : total / tally.requests);
  return {
    requests: tally.requests,
    meanTokensPerRequest: Math.round(perRequest(tally.sentTokens)),
    lastRequestTokens: tally.lastRequestTokens,
    totalSentTokens: tally.sentTokens,
    totalFullHistoryTokens: tally.fullHistoryTokens,
    savedPercent: savedPercent(tally.sentTokens, tally.fullHistoryTokens),
    meanLatencyMicroseconds: Math.round(perRequest(tally.latencyMs * 10_000)) / 10,
  };
}
