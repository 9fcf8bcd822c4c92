import type { Fact } from '../facts/fact.js';
import { factLine } from '../facts/fact-line.js';
import type { RecallHit } from '../recall/recall.js';
import type { TokenCounter } from '../tokens/token-counter.js';
import type { ContextItem, ContextMessage, ExcludedItem } from './context-types.js';
import { compareText } from '../text/compare-text.js';

/** A block of a hybrid context (facts, or recalled snippets): its message, cost, and what it holds or left out. */
export interface ItemBlock {
  readonly message: ContextMessage | undefined;
  readonly tokens: number;
  readonly items: readonly ContextItem[];
  readonly excluded: readonly ExcludedItem[];
}

// A long recalled message is cut to this many tokens: several short snippets beat one long one.
const maxSnippetTokens = 160;

// Where an assistant answers at length (recall's `longReplies`), a reply is commentary on what the user
// told it (issue 23, decision 0046): its snippet is its opening, a sentence or two, so more of the user's
// own turns fit. Chosen on the generated chats' tuning part among 160, 80 and 48.
const replySnippetTokens = 48;

/**
 * The user's current facts as one system message (`attribute: value` lines, newest statement last),
 * within `maxTokens`; facts that do not fit are listed as excluded. Empty when there are no facts.
 */
export function factsBlock(facts: readonly Fact[], counter: TokenCounter, maxTokens: number): ItemBlock {
  const header = 'Known facts about the user (current values):';
  const lines = facts.map((fact) => ({
    fact,
    line: `- ${factLine(fact)} (since ${fact.validFrom.slice(0, 10)})`,
  }));
  return fillBlock(
    header,
    lines.map(({ fact, line }) => ({ line, item: { kind: 'fact', id: fact.id, tokens: 0, score: fact.confidence } })),
    counter,
    maxTokens,
  );
}

/** The first line of the recalled snippets' message: where a prompt's per-request part starts. */
export const recalledBlockHeader = 'Earlier messages that may matter for this turn (retrieved from the full history):';

/**
 * Recalled messages as one system message, chosen best hits first while they fit (the rest excluded)
 * and written in time order under one line per day (`[2023-05-08]`, then `name: text` lines): the date
 * is said once a day instead of once a snippet, so more snippets fit, and a model reads "before" and
 * "after" off the order. A snippet of the newest turn's day or the day before also gets its time of day
 * (`13:56 name: text`), for "this morning" and "last night"; `newestAt` is that turn's ISO time (none:
 * every snippet gets its time). With `longReplies` (recall's: an assistant that answers at length), the
 * assistant's replies get shorter snippets than the user's turns (`replySnippetTokens`).
 */
export function recalledBlock(
  hits: readonly RecallHit[],
  counter: TokenCounter,
  maxTokens: number,
  newestAt?: string,
  longReplies = false,
): ItemBlock {
  const timedFrom = newestAt === undefined ? '' : previousDay(newestAt.slice(0, 10));
  const entries = hits.map((hit) => {
    const cap = longReplies && hit.message.role === 'assistant' ? replySnippetTokens : maxSnippetTokens;
    const content =
      counter.countText(hit.message.content) > cap
        ? `${counter.truncateText(hit.message.content, cap)}…`
        : hit.message.content;
    const day = hit.message.createdAt.slice(0, 10);
    const time = day >= timedFrom ? `${hit.message.createdAt.slice(11, 16)} ` : '';
    return {
      hit,
      day,
      line: `${time}${hit.message.name ?? hit.message.role}: ${content}`,
      item: {
        kind: 'recalled' as const,
        id: hit.message.id,
        conversationId: hit.conversationId,
        seq: hit.message.seq,
        tokens: 0,
        score: hit.score,
        explain: hit.explain,
      },
    };
  });
  type Entry = (typeof entries)[number];
  const render = (chosen: readonly Entry[]) => {
    const ordered = [...chosen].sort(
      (a, b) =>
        compareText(a.hit.message.createdAt, b.hit.message.createdAt) ||
        compareText(a.hit.conversationId, b.hit.conversationId) ||
        a.hit.message.seq - b.hit.message.seq,
    );
    const lines = [recalledBlockHeader];
    for (const [index, entry] of ordered.entries()) {
      if (index === 0 || ordered[index - 1]!.day !== entry.day) lines.push(`[${entry.day}]`);
      lines.push(entry.line);
    }
    return lines.join('\n');
  };
  const chosen: Entry[] = [];
  const items: ContextItem[] = [];
  const excluded: ExcludedItem[] = [];
  const days = new Set<string>();
  let used = counter.countMessage({ role: 'system', content: recalledBlockHeader });
  for (const entry of entries) {
    // A line costs its own tokens and the newline joining it, and its day's line when it opens one; checked in total below.
    const cost =
      counter.countText(`\n${entry.line}`) + (days.has(entry.day) ? 0 : counter.countText(`\n[${entry.day}]`));
    if (used + cost > maxTokens) {
      excluded.push({ ...entry.item, tokens: cost, reason: 'over_budget' });
      continue;
    }
    chosen.push(entry);
    days.add(entry.day);
    items.push({ ...entry.item, tokens: cost });
    used += cost;
  }
  let tokens = chosen.length === 0 ? 0 : counter.countMessage({ role: 'system', content: render(chosen) });
  // Merges across line joins can differ by a token; drop the worst hits until the exact count fits.
  while (tokens > maxTokens && chosen.length > 0) {
    chosen.pop();
    excluded.push({ ...items.pop()!, reason: 'over_budget' });
    tokens = chosen.length === 0 ? 0 : counter.countMessage({ role: 'system', content: render(chosen) });
  }
  return chosen.length === 0
    ? { message: undefined, tokens: 0, items: [], excluded }
    : { message: { role: 'system', content: render(chosen) }, tokens, items, excluded };
}

// The calendar day before an ISO date (YYYY-MM-DD), in UTC as stored times are.
function previousDay(day: string): string {
  const time = Date.parse(`${day}T00:00:00Z`);
  return Number.isNaN(time) ? '' : new Date(time - 86_400_000).toISOString().slice(0, 10);
}

function fillBlock(
  header: string,
  entries: readonly { line: string; item: ContextItem }[],
  counter: TokenCounter,
  maxTokens: number,
): ItemBlock {
  const framing = counter.countMessage({ role: 'system', content: header });
  const items: ContextItem[] = [];
  const excluded: ExcludedItem[] = [];
  const lines: string[] = [];
  let used = framing;
  for (const { line, item } of entries) {
    // Each line costs its own tokens plus the newline joining it; counted per line, checked in total below.
    const cost = counter.countText(`\n${line}`);
    if (used + cost > maxTokens) {
      excluded.push({ ...item, tokens: cost, reason: 'over_budget' });
      continue;
    }
    lines.push(line);
    items.push({ ...item, tokens: cost });
    used += cost;
  }
  if (lines.length === 0) return { message: undefined, tokens: 0, items: [], excluded };
  const message: ContextMessage = { role: 'system', content: [header, ...lines].join('\n') };
  let tokens = counter.countMessage(message);
  // Merges across line joins can differ by a token; drop from the end until the exact count fits.
  while (tokens > maxTokens && lines.length > 0) {
    lines.pop();
    const dropped = items.pop()!;
    excluded.push({ ...dropped, reason: 'over_budget' });
    tokens = lines.length === 0 ? 0 : counter.countMessage({ role: 'system', content: [header, ...lines].join('\n') });
  }
  return lines.length === 0
    ? { message: undefined, tokens: 0, items: [], excluded }
    : { message: { role: 'system', content: [header, ...lines].join('\n') }, tokens, items, excluded };
}
