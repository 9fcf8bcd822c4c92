import { createMemory, type MessageInput } from '@mnemo/core';
import { savedPercent } from '@mnemo/core/internals';
import { InMemoryStore } from '@mnemo/core/testing';
import type { CompactionVariant } from './compaction-variants.js';
import type { ReplaySettings } from './replay-token-costs.js';

/**
 * What the `summary` policy costs a bot at one conversation length N, two ways. Per request (the seed's
 * notion): the bot's last request at length N, i.e. before the last assistant message among the first N,
 * against resending the whole history for it; NET adds the summarizer tokens spent so far, spread over
 * the requests so far. Cumulative: every request up to N, plus every summarizer call, against resending
 * the whole history every time.
 */
export interface CompactionCostRow {
  readonly messages: number;
  /** Requests up to N: one before each assistant message. */
  readonly requests: number;
  /** Tokens of the last request carrying the whole history (the bot as it is today). */
  readonly fullTokensPerRequest: number;
  /** Tokens the `summary` policy sent for the last request. */
  readonly sentTokensPerRequest: number;
  /** `sentTokensPerRequest` against `fullTokensPerRequest`, 0–100, one decimal. */
  readonly savedPercentPerRequest: number;
  /** Tokens of the memory block (the summary and its one-line header) in the last request; 0 before the first compaction. */
  readonly summaryBlockTokens: number;
  /** Summarizer calls up to the last request (a condensation to the next level is a call). */
  readonly compactions: number;
  readonly summarizerInputTokens: number;
  readonly summarizerOutputTokens: number;
  /** `sentTokensPerRequest + (summarizerInputTokens + summarizerOutputTokens) / requests`, rounded. */
  readonly netTokensPerRequest: number;
  /** `netTokensPerRequest` against `fullTokensPerRequest` (computed unrounded), one decimal. */
  readonly netSavedPercentPerRequest: number;
  /** Σ over the requests up to N. */
  readonly totalSentTokens: number;
  readonly totalFullHistoryTokens: number;
  /** `totalSentTokens` against `totalFullHistoryTokens`. */
  readonly savedPercentTotal: number;
  /** `totalSentTokens + summarizer tokens` against `totalFullHistoryTokens`. */
  readonly netSavedPercentTotal: number;
}

/** One variant replayed over one conversation: its settings and a row per requested size. */
export interface CompactionCostSeries {
  readonly variant: string;
  readonly description: string;
  readonly settings: CompactionVariant['settings'];
  readonly rows: readonly CompactionCostRow[];
}

interface Snapshot {
  readonly requests: number;
  readonly fullTokens: number;
  readonly sentTokens: number;
  readonly summaryBlockTokens: number;
  readonly compactions: number;
  readonly summarizerInputTokens: number;
  readonly summarizerOutputTokens: number;
  readonly totalSentTokens: number;
  readonly totalFullHistoryTokens: number;
}

/**
 * Replays a conversation once under the `summary` policy with a variant's compaction settings, as the
 * bot lives it: appends the messages one by one and, before each assistant message, runs the pending
 * compaction (a live bot's worker does so between turns; draining keeps the run deterministic) and
 * builds the context. The offline summarizer reports the prompt an LLM summarizer would have been sent,
 * and that is what the summarizer columns count. Sizes larger than the conversation are dropped; the
 * state at size N is exactly that of a replay of the first N messages, so one pass serves every size.
 */
export async function replayCompactionCosts(
  conversation: readonly MessageInput[],
  sizes: readonly number[],
  settings: ReplaySettings,
  variant: CompactionVariant,
): Promise<CompactionCostSeries> {
  const memory = createMemory({
    store: new InMemoryStore(),
    context: { maxTokens: settings.maxTokens },
    compaction: { settings: variant.settings },
    worker: { autoStart: false },
  });
  const scope = { conversationId: 'bench-node' };
  const wanted = [...new Set(sizes)].filter((size) => size <= conversation.length).sort((a, b) => a - b);
  // The request that stands for size N is the last one before an assistant message at position ≤ N.
  let last: Snapshot | undefined;
  const rows: CompactionCostRow[] = [];
  let totalSentTokens = 0;
  let totalFullHistoryTokens = 0;
  let requests = 0;
  const emitUpTo = (position: number) => {
    while (wanted.length > 0 && wanted[0]! < position) {
      const size = wanted.shift()!;
      if (last !== undefined) rows.push(toRow(size, last));
    }
  };
  for (const [index, message] of conversation.entries()) {
    const position = index + 1;
    emitUpTo(position);
    if (message.role === 'assistant') {
      await memory.runPendingJobs();
      const { report } = await memory.buildContext(scope, {
        policy: 'summary',
        maxTokens: settings.maxTokens,
        system: settings.system,
      });
      const usage = (await memory.stats(scope))!.usage;
      requests += 1;
      totalSentTokens += report.sentTokens;
      totalFullHistoryTokens += report.fullHistoryTokens;
      last = {
        requests,
        fullTokens: report.fullHistoryTokens,
        sentTokens: report.sentTokens,
        summaryBlockTokens: report.parts.find((part) => part.kind === 'summary')?.tokens ?? 0,
        compactions: usage.compactions,
        summarizerInputTokens: usage.summarizerInputTokens,
        summarizerOutputTokens: usage.summarizerOutputTokens,
        totalSentTokens,
        totalFullHistoryTokens,
      };
    }
    await memory.append(scope, message);
  }
  emitUpTo(Number.POSITIVE_INFINITY);
  await memory.close();
  return { variant: variant.name, description: variant.description, settings: variant.settings, rows };
}

function toRow(messages: number, snapshot: Snapshot): CompactionCostRow {
  const summarizerTokens = snapshot.summarizerInputTokens + snapshot.summarizerOutputTokens;
  const netPerRequest = snapshot.sentTokens + summarizerTokens / snapshot.requests;
  return {
    messages,
    requests: snapshot.requests,
    fullTokensPerRequest: snapshot.fullTokens,
    sentTokensPerRequest: snapshot.sentTokens,
    savedPercentPerRequest: savedPercent(snapshot.sentTokens, snapshot.fullTokens),
    summaryBlockTokens: snapshot.summaryBlockTokens,
    compactions: snapshot.compactions,
    summarizerInputTokens: snapshot.summarizerInputTokens,
    summarizerOutputTokens: snapshot.summarizerOutputTokens,
    netTokensPerRequest: Math.round(netPerRequest),
    netSavedPercentPerRequest: savedPercent(netPerRequest, snapshot.fullTokens),
    totalSentTokens: snapshot.totalSentTokens,
    totalFullHistoryTokens: snapshot.totalFullHistoryTokens,
    savedPercentTotal: savedPercent(snapshot.totalSentTokens, snapshot.totalFullHistoryTokens),
    netSavedPercentTotal: savedPercent(snapshot.totalSentTokens + summarizerTokens, snapshot.totalFullHistoryTokens),
  };
}
