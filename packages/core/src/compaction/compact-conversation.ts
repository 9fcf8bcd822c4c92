import { isMemoryError } from '../errors/memory-error.js';
import type { Fact } from '../facts/fact.js';
import { factLine } from '../facts/fact-line.js';
import type { Scope } from '../messages/scope.js';
import type { JobTimeSlice } from '../jobs/time-slice.js';
import type { Store } from '../store/store.js';
import type { TokenCounter } from '../tokens/token-counter.js';
import type { CompactionSettings } from './compaction-settings.js';
import { isCompactionDue, planCompaction } from './plan-compaction.js';
import type { NewSummary, Summary } from './summary.js';
import type { SummarizeInput, SummarizeResult, Summarizer, SummaryStatement } from './summarizer.js';

/** What a compaction needs: the store, the summarizer, the counter and the settings. */
export interface CompactionDependencies {
  readonly store: Store;
  readonly summarizer: Summarizer;
  readonly tokenCounter: TokenCounter;
  readonly settings: CompactionSettings;
  readonly now?: () => number;
}

// A summary that outgrew its bound (an LLM may overshoot; the extractive summarizer never does) is
// condensed into the next level at half the bound, so later folds have room again.
const condenseAtRatio = 1;
const maxRounds = 100;

/**
 * Folds raw messages into the conversation's rolling summary until compaction is no longer due (or,
 * with `force`, until nothing more can be cut). Each round summarizes the previous summary plus the
 * next range and writes the new summary and the watermark move in one store transaction; a round that
 * loses the race to another worker (the watermark moved) ends the run without error, since that worker
 * did the same work. With a job's `slice`, a round that would not end before the attempt's deadline is
 * not started (the job queues the rest). Returns the summaries written.
 */
export async function compactConversation(
  dependencies: CompactionDependencies,
  scope: Scope,
  options: { force?: boolean; signal?: AbortSignal; slice?: JobTimeSlice } = {},
): Promise<Summary[]> {
  const { store, settings } = dependencies;
  const written: Summary[] = [];
  for (let round = 0; round < maxRounds; round += 1) {
    options.signal?.throwIfAborted();
    const conversation = await store.getConversation(scope, options);
    if (conversation === undefined) break;
    const backlog = {
      rawMessages: conversation.messageCount - conversation.summarizedThroughSeq,
      rawTokens: conversation.totalTokens - conversation.summarizedTokens,
      neverCompacted: conversation.summarizedThroughSeq === 0,
    };
    if (!options.force && !isCompactionDue(backlog, settings)) break;
    const raw = await store.listMessages(scope, { afterSeq: conversation.summarizedThroughSeq }, options);
    const range = planCompaction(raw, settings, options.force === true);
    if (range.length === 0) break;
    if (options.slice !== undefined && !options.slice.roomForRound()) break;
    try {
      written.push(
        ...(await foldRange(
          dependencies,
          scope,
          conversation.summarizedThroughSeq,
          conversation.erasedMessages ?? 0,
          range,
          options.signal,
        )),
      );
    } catch (error) {
      if (isMemoryError(error, 'conflict')) break;
      throw error;
    }
  }
  return written;
}

async function foldRange(
  dependencies: CompactionDependencies,
  scope: Scope,
  watermark: number,
  erasedMessages: number,
  range: SummarizeInput['messages'],
  signal: AbortSignal | undefined,
): Promise<Summary[]> {
  const { store, summarizer, settings } = dependencies;
  const previous = await store.getLatestSummary(scope, { signal });
  const toSeq = range[range.length - 1]!.seq;
  const facts = settings.keepFacts ? await factStatements(store, scope, toSeq, signal) : { keep: [], drop: [] };
  const folded = await summarizer.summarize({
    ...(previous === undefined ? {} : { previousSummary: previous.content }),
    messages: range,
    ...(facts.keep.length === 0 ? {} : { keep: facts.keep }),
    ...(facts.drop.length === 0 ? {} : { drop: facts.drop }),
    maxSummaryTokens: settings.maxSummaryTokens,
    ...(signal === undefined ? {} : { signal }),
  });
  const summary = await store.insertSummary(scope, toNewSummary(dependencies, folded, 0, toSeq, previous), {
    expectedWatermark: watermark,
    expectedErasedMessages: erasedMessages,
    signal,
  });
  if (summary.tokens <= settings.maxSummaryTokens * condenseAtRatio) return [summary];
  const condensed = await summarizer.summarize({
    previousSummary: summary.content,
    messages: [],
    ...(facts.keep.length === 0 ? {} : { keep: facts.keep }),
    ...(facts.drop.length === 0 ? {} : { drop: facts.drop }),
    maxSummaryTokens: Math.floor(settings.maxSummaryTokens / 2),
    ...(signal === undefined ? {} : { signal }),
  });
  const next = await store.insertSummary(
    scope,
    toNewSummary(dependencies, condensed, summary.level + 1, toSeq, summary),
    {
      expectedWatermark: toSeq,
      expectedErasedMessages: erasedMessages,
      signal,
    },
  );
  return [summary, next];
}

/**
 * The facts this conversation stated in messages 1…toSeq, for the summarizer: current ones to keep as
 * `attribute: value` lines (the facts block's wording, in the order they were said), and the lines and
 * statements of superseded ones to leave out. A fact that expires is left out like a superseded one, so
 * that once it expires no summary carries it. Facts of the user's other conversations stay out: a
 * summary stands for its own messages.
 */
async function factStatements(
  store: Store,
  scope: Scope,
  toSeq: number,
  signal: AbortSignal | undefined,
): Promise<{ keep: SummaryStatement[]; drop: string[] }> {
  const { conversationId: _conversation, ...user } = scope;
  const facts = (await store.listFacts(user, { includeHistory: true }, { signal })).filter(
    (fact) =>
      fact.sourceConversationId === scope.conversationId &&
      fact.sourceSeqs.length > 0 &&
      Math.max(...fact.sourceSeqs) <= toSeq,
  );
  const lasting = (fact: Fact) => fact.validTo === undefined && fact.expiresAt === undefined;
  const keep = new Map<string, SummaryStatement>();
  for (const fact of facts.filter(lasting)) {
    const text = factLine(fact);
    if (!keep.has(text)) keep.set(text, { text, seq: Math.min(...fact.sourceSeqs), createdAt: fact.validFrom });
  }
  const currentTexts = new Set(facts.filter(lasting).map((fact) => fact.text));
  const drop = new Set(
    facts
      .filter((fact) => !lasting(fact))
      .flatMap((fact) => [factLine(fact), ...(currentTexts.has(fact.text) ? [] : [fact.text])])
      .filter((text) => !keep.has(text)),
  );
  return { keep: [...keep.values()].sort((a, b) => a.seq - b.seq), drop: [...drop] };
}

function toNewSummary(
  dependencies: CompactionDependencies,
  result: SummarizeResult,
  level: number,
  toSeq: number,
  folds: Summary | undefined,
): NewSummary {
  return {
    level,
    fromSeq: 1,
    toSeq,
    content: result.content,
    tokens: dependencies.tokenCounter.countText(result.content),
    foldedSummaryIds: folds === undefined ? [] : [folds.id],
    summarizer: result.summarizer,
    inputTokens: result.inputTokens,
    outputTokens: result.outputTokens,
    ...(result.fallbackReason === undefined ? {} : { fallbackReason: result.fallbackReason }),
    createdAt: new Date((dependencies.now ?? Date.now)()).toISOString(),
  };
}
