import { createMemory, type MessageInput } from '@mnemo/core';
import { InMemoryStore } from '@mnemo/core/testing';
import type { CompactionVariant } from './compaction-variants.js';
import type { PlantedFact } from './plant-facts.js';
import type { ReplaySettings } from './replay-token-costs.js';

/** Whether one planted fact made it to the final context, and until when it was in the contexts. */
export interface FactOutcome {
  readonly kind: string;
  readonly value: string;
  readonly plantedAtTurn: number;
  /** True when `value` is an exact substring of the final context. */
  readonly kept: boolean;
  /** Where the final context carried it: the summary block, a raw recent message, or nowhere. */
  readonly foundIn: 'summary' | 'recent' | 'none';
  /** Last user turn whose request carried the value (the turn it was planted, at least, for a fact ever seen); 0 if never. */
  readonly lastSeenAtTurn: number;
  /** Asked `fact.question` at the end: whether the default (`hybrid`) context built for it carries the value, and whether the `summary` one does. */
  readonly answeredHybrid: boolean;
  readonly answeredSummary: boolean;
}

/** Min, mean (rounded) and max of a list of token counts; zeros for an empty list. */
export interface TokenSpread {
  readonly min: number;
  readonly mean: number;
  readonly max: number;
}

/** What a replay under one compaction variant left in the final context, and what its compactions cost. */
export interface SurvivalResult {
  readonly variant: string;
  readonly description: string;
  readonly settings: CompactionVariant['settings'];
  readonly messages: number;
  readonly turns: number;
  readonly facts: readonly FactOutcome[];
  readonly keptCount: number;
  /** Facts whose question got a `hybrid` (the library's default policy) / `summary` context carrying the value. */
  readonly answeredHybridCount: number;
  readonly answeredSummaryCount: number;
  /** Tokens of the latest summary's text, and of its block (with the header line) in the final context. */
  readonly summaryTokens: number;
  readonly summaryBlockTokens: number;
  readonly finalSentTokens: number;
  readonly finalFullHistoryTokens: number;
  /** Summarizer calls: every stored summary is one (level 0 folds messages; a higher level condenses a summary). */
  readonly compactions: number;
  readonly condensations: number;
  /** Per summarizer call: the prompt an LLM would be sent, and the summary it returned. */
  readonly promptTokens: TokenSpread;
  readonly outputTokens: TokenSpread;
  readonly totalSummarizerTokens: number;
}

/**
 * Replays a chat under the `summary` policy with a variant's compaction settings, offline: before each
 * assistant message it drains compaction and builds the context the bot would send, notes which planted
 * values the context holds, and ends with the last request's context as the final one.
 */
export async function replayFactSurvival(
  conversation: readonly MessageInput[],
  facts: readonly PlantedFact[],
  settings: ReplaySettings,
  variant: CompactionVariant,
): Promise<SurvivalResult> {
  const memory = createMemory({
    store: new InMemoryStore(),
    context: { maxTokens: settings.maxTokens },
    compaction: { settings: variant.settings },
    worker: { autoStart: false },
  });
  const scope = { conversationId: 'survival' };
  const lastSeen = new Map<string, number>();
  let turn = 0;
  let final:
    | { messages: readonly { content: string }[]; hasSummary: boolean; sent: number; full: number; blockTokens: number }
    | undefined;
  for (const message of conversation) {
    if (message.role === 'user') turn += 1;
    if (message.role === 'assistant') {
      await memory.runPendingJobs();
      const { messages, report } = await memory.buildContext(scope, {
        policy: 'summary',
        maxTokens: settings.maxTokens,
        system: settings.system,
      });
      const text = messages.map((entry) => entry.content).join('\n');
      for (const fact of facts) if (text.includes(fact.value)) lastSeen.set(fact.value, turn);
      const block = report.parts.find((part) => part.kind === 'summary');
      final = {
        messages,
        hasSummary: block !== undefined,
        sent: report.sentTokens,
        full: report.fullHistoryTokens,
        blockTokens: block?.tokens ?? 0,
      };
    }
    await memory.append(scope, message);
  }
  // At the end the user asks about each fact in turn: the context for that question under the library's
  // default policy (hybrid: facts, summary, recall for the question, recent turns) and under summary.
  await memory.runPendingJobs();
  const answered = new Map<string, { hybrid: boolean; summary: boolean }>();
  for (const fact of facts) {
    const carries = async (policy: 'hybrid' | 'summary') => {
      const { messages } = await memory.buildContext(scope, {
        policy,
        maxTokens: settings.maxTokens,
        system: settings.system,
        query: fact.question,
      });
      return messages.some((entry) => entry.content.includes(fact.value));
    };
    answered.set(fact.value, { hybrid: await carries('hybrid'), summary: await carries('summary') });
  }
  const summaries = await memory.listSummaries(scope);
  await memory.close();
  // The memory block is the context's second message when there is one (after the system prompt).
  const summaryText =
    final?.hasSummary === true ? (final.messages[settings.system === undefined ? 0 : 1]?.content ?? '') : '';
  const recentText = (final?.messages ?? [])
    .filter((entry) => entry.content !== summaryText)
    .map((entry) => entry.content)
    .join('\n');
  const outcomes = facts.map((fact): FactOutcome => {
    const foundIn = summaryText.includes(fact.value) ? 'summary' : recentText.includes(fact.value) ? 'recent' : 'none';
    const answer = answered.get(fact.value)!;
    return {
      kind: fact.kind,
      value: fact.value,
      plantedAtTurn: fact.turn,
      kept: foundIn !== 'none',
      foundIn,
      lastSeenAtTurn: lastSeen.get(fact.value) ?? 0,
      answeredHybrid: answer.hybrid,
      answeredSummary: answer.summary,
    };
  });
  const latest = summaries[summaries.length - 1];
  return {
    variant: variant.name,
    description: variant.description,
    settings: variant.settings,
    messages: conversation.length,
    turns: turn,
    facts: outcomes,
    keptCount: outcomes.filter((outcome) => outcome.kept).length,
    answeredHybridCount: outcomes.filter((outcome) => outcome.answeredHybrid).length,
    answeredSummaryCount: outcomes.filter((outcome) => outcome.answeredSummary).length,
    summaryTokens: latest?.tokens ?? 0,
    summaryBlockTokens: final?.blockTokens ?? 0,
    finalSentTokens: final?.sent ?? 0,
    finalFullHistoryTokens: final?.full ?? 0,
    compactions: summaries.length,
    condensations: summaries.filter((summary) => summary.level > 0).length,
    promptTokens: spread(summaries.map((summary) => summary.inputTokens)),
    outputTokens: spread(summaries.map((summary) => summary.outputTokens)),
    totalSummarizerTokens: summaries.reduce((sum, summary) => sum + summary.inputTokens + summary.outputTokens, 0),
  };
}

function spread(values: readonly number[]): TokenSpread {
  if (values.length === 0) return { min: 0, mean: 0, max: 0 };
  return {
    min: Math.min(...values),
    mean: Math.round(values.reduce((sum, value) => sum + value, 0) / values.length),
    max: Math.max(...values),
  };
}
