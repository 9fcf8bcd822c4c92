import type { Conversation, Memory, Message, MessageInput } from '@mnemo/core';

/** The user that conversations named without one belonged to before every conversation became its own user (decision 0010). */
export const legacyDefaultUserId = 'default';

// Messages read and appended per step: one transaction each, well under the server's batch limit.
const batchSize = 500;

/** What happened to one conversation of the default user. */
export interface SplitOutcome {
  readonly conversationId: string;
  /** `moved`: copied to its own user and erased from `default`; `finished`: an earlier, interrupted run had copied it; `skipped`: its own user already has a different conversation of that id. */
  readonly outcome: 'moved' | 'finished' | 'skipped';
  readonly messages: number;
}

/**
 * Moves every conversation of user `default` in `tenantId` to its own user (`userId` = the conversation
 * id), as the seed API and the proxy now name it: each stored message in order, with its time, name,
 * tool calls, metadata and idempotency key; then erases the original. Summaries, facts, entities and
 * vectors of the moved messages are derived again by the background jobs their appends enqueue.
 * Safe to run again after an interruption: a copy that was cut short is completed from where it stopped.
 * `dryRun` reports what would happen and writes nothing.
 */
export async function splitDefaultUser(
  memory: Memory,
  options: { tenantId: string; dryRun?: boolean; onProgress?: (outcome: SplitOutcome) => void },
): Promise<SplitOutcome[]> {
  const outcomes: SplitOutcome[] = [];
  const conversations: Conversation[] = [];
  let cursor: string | undefined;
  do {
    const page = await memory.listConversations(
      { tenantId: options.tenantId, userId: legacyDefaultUserId },
      cursor === undefined ? {} : { cursor },
    );
    conversations.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  for (const conversation of conversations) {
    // A conversation named "default" already is its own user.
    if (conversation.conversationId === legacyDefaultUserId) continue;
    const outcome = await moveConversation(memory, conversation, options.dryRun === true);
    outcomes.push(outcome);
    options.onProgress?.(outcome);
  }
  return outcomes;
}

async function moveConversation(memory: Memory, source: Conversation, dryRun: boolean): Promise<SplitOutcome> {
  const { tenantId, conversationId } = source;
  const from = { tenantId, userId: legacyDefaultUserId, conversationId };
  const to = { tenantId, userId: conversationId, conversationId };
  const copied = (await memory.stats(to))?.messageCount ?? 0;
  if (copied > source.messageCount || (copied > 0 && !(await samePrefix(memory, from, to, copied)))) {
    return { conversationId, outcome: 'skipped', messages: source.messageCount };
  }
  const outcome = copied === source.messageCount ? 'finished' : 'moved';
  if (dryRun) return { conversationId, outcome, messages: source.messageCount };
  for (let afterSeq = copied; afterSeq < source.messageCount;) {
    const batch = await memory.listMessages(from, { afterSeq, limit: batchSize });
    if (batch.length === 0) break;
    await memory.append(to, batch.map(toInput));
    afterSeq = batch.at(-1)!.seq;
  }
  await memory.erase(from);
  return { conversationId, outcome, messages: source.messageCount };
}

// An interrupted run left the first `count` messages in the target: they must be the source's, else the target is someone else's.
async function samePrefix(
  memory: Memory,
  from: { tenantId: string; userId: string; conversationId: string },
  to: typeof from,
  count: number,
): Promise<boolean> {
  const [original, copy] = await Promise.all([
    memory.listMessages(from, { afterSeq: count - 1, limit: 1 }),
    memory.listMessages(to, { afterSeq: count - 1, limit: 1 }),
  ]);
  return (
    original[0] !== undefined &&
    copy[0] !== undefined &&
    original[0].role === copy[0].role &&
    original[0].content === copy[0].content &&
    original[0].createdAt === copy[0].createdAt
  );
}

function toInput(message: Message): MessageInput {
  return {
    role: message.role,
    content: message.content,
    createdAt: message.createdAt,
    ...(message.name === undefined ? {} : { name: message.name }),
    ...(message.toolCalls === undefined ? {} : { toolCalls: message.toolCalls }),
    ...(message.toolCallId === undefined ? {} : { toolCallId: message.toolCallId }),
    ...(message.metadata === undefined ? {} : { metadata: message.metadata }),
    ...(message.idempotencyKey === undefined ? {} : { idempotencyKey: message.idempotencyKey }),
  };
}
