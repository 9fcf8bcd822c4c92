import type { Message } from '../messages/message.js';
import type { Scope } from '../messages/scope.js';
import type { Store } from '../store/store.js';
import type { TokenCounter } from '../tokens/token-counter.js';
import { assembleContext } from './assemble-context.js';
import type { BuiltContext, ContextPolicy } from './context-types.js';

/** Settled options of one context build (the engine fills defaults). */
export interface ContextRequest {
  readonly policy: ContextPolicy;
  readonly maxTokens: number;
  readonly system?: string;
  readonly windowTurns: number;
  readonly signal?: AbortSignal;
}

const pageSize = 128;

/**
 * Builds the context of one conversation from the store: reads only the newest messages the policy can
 * use (never the whole history of a long conversation), assembles them under the budget, and records the
 * build in the usage ledger (for a conversation that exists).
 */
export async function buildContext(
  store: Store,
  counter: TokenCounter,
  scope: Scope,
  request: ContextRequest,
  now: () => number = Date.now,
): Promise<BuiltContext> {
  const conversation = await store.getConversation(scope, { signal: request.signal });
  // Only the summary policy reads past the watermark through the summary; the others see raw history.
  const watermark = request.policy === 'summary' ? (conversation?.summarizedThroughSeq ?? 0) : 0;
  const summary = watermark > 0 ? await store.getLatestSummary(scope, { signal: request.signal }) : undefined;
  const tail = conversation === undefined ? [] : await loadTail(store, scope, request, watermark);
  const built = assembleContext({
    ...request,
    counter,
    tail,
    totalMessages: conversation?.messageCount ?? 0,
    totalTokens: conversation?.totalTokens ?? 0,
    ...(summary === undefined || conversation === undefined
      ? {}
      : { summary: { id: summary.id, content: summary.content, toSeq: summary.toSeq, coveredTokens: conversation.summarizedTokens } }),
  });
  if (conversation !== undefined) {
    const { policy, sentTokens, fullHistoryTokens } = built.report;
    const record = { kind: 'context' as const, policy, sentTokens, fullHistoryTokens, createdAt: new Date(now()).toISOString() };
    await store.insertUsage(scope, record, { signal: request.signal });
  }
  return built;
}

/**
 * Reads pages newest first until the policy cannot use anything older: the `window` policy once it holds
 * one user message more than its window (so the oldest window turn is whole), the others once the tail
 * alone exceeds the budget, never reading at or before `afterSeq` (the summary's watermark). Then it
 * extends the tail back to a message that is not a tool result, so a tool call is never read without
 * its results (compaction cuts at turn boundaries, so the watermark never splits one).
 */
async function loadTail(store: Store, scope: Scope, request: ContextRequest, afterSeq: number): Promise<Message[]> {
  const tail: Message[] = [];
  let tokens = 0;
  let userMessages = 0;
  const enough = () =>
    request.policy === 'window' ? userMessages > request.windowTurns : tokens > request.maxTokens;
  while (!enough() || tail[0]?.role === 'tool') {
    const beforeSeq = tail[0]?.seq;
    const page = await store.listMessages(
      scope,
      { order: 'desc', limit: pageSize, afterSeq, ...(beforeSeq === undefined ? {} : { beforeSeq }) },
      { signal: request.signal },
    );
    for (const message of page) {
      tail.unshift(message);
      tokens += message.tokens;
      if (message.role === 'user') userMessages += 1;
    }
    if (page.length < pageSize) break;
  }
  return tail;
}
