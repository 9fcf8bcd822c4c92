import { memoryToolName } from '../files/memory-tool-schema.js';
import { normalizeMemoryPath } from '../files/memory-file.js';
import type { Message } from '../messages/message.js';
import type { Scope, UserScope } from '../messages/scope.js';
import { checkMessageSelection, type ErasureReceipt, type MessageSelection } from '../store/message-erasure.js';
import type { CallOptions, Store } from '../store/store.js';

/** What {@link eraseMessages} needs: the store, the clock, and what to do once a conversation lost messages (queue its compaction). */
export interface EraseMessagesDependencies {
  readonly store: Store;
  readonly now: () => number;
  readonly afterErase: (scope: Scope, options?: CallOptions) => Promise<void>;
}

/**
 * Most messages one store erasure removes. A larger selection (a user's whole history, a retention sweep)
 * is erased in steps of at most this many messages of one conversation, each its own transaction with a
 * short pause after it, so other writers of the store (another user's appends on SQLite's one write lock)
 * get their turn instead of waiting out their busy timeout.
 */
export const eraseStepMessages = 2_000;

/** The pause after each step of a stepped erasure, in ms. */
const eraseStepPauseMs = 10;

/**
 * Erases some of a user's messages and all that was made of them (`Store.eraseMessages`), first undoing
 * the memory-file writes their memory-tool calls made (the text a `create`, `insert` or `str_replace`
 * wrote is cut out of the file; a file left empty is deleted), then queueing the compaction of every
 * conversation that lost messages, which folds what remains into a summary again in the background.
 * A selection of more than {@link eraseStepMessages} messages is erased in steps (each a seq range of one
 * conversation, still bounded by `before`), each with its own audit entry; the receipt sums them (a fact
 * kept by one step and removed by a later one counts in both) and names the last step's audit entry.
 */
export async function eraseMessages(
  dependencies: EraseMessagesDependencies,
  user: UserScope,
  selection: MessageSelection,
  options: CallOptions = {},
): Promise<ErasureReceipt> {
  const { store } = dependencies;
  const checked = checkMessageSelection(selection);
  const doomed = await selectedMessages(store, user, checked, options);
  let memoryFiles = 0;
  for (const write of doomed.flatMap(({ messages }) => messages.flatMap(memoryWritesOf)))
    memoryFiles += await undoWrite(dependencies, user, write, options);
  const steps =
    doomed.reduce((sum, { messages }) => sum + messages.length, 0) <= eraseStepMessages
      ? [checked]
      : erasureSteps(doomed, checked.before);
  let receipt: ErasureReceipt | undefined;
  for (const [index, step] of steps.entries()) {
    if (index > 0) await new Promise((resolve) => setTimeout(resolve, eraseStepPauseMs));
    const part = await store.eraseMessages(user, step, {
      now: new Date(dependencies.now()).toISOString(),
      memoryFiles: index === 0 ? memoryFiles : 0,
      ...options,
    });
    receipt = receipt === undefined ? part : addReceipts(receipt, part);
  }
  for (const { conversationId, messages } of doomed)
    if (messages.length > 0) await dependencies.afterErase({ ...user, conversationId }, options);
  const conversations = doomed.filter(({ messages }) => messages.length > 0).length;
  return steps.length === 1 ? receipt! : { ...receipt!, conversations };
}

// Seq ranges of at most eraseStepMessages selected messages of one conversation, oldest first.
function erasureSteps(
  doomed: readonly { conversationId: string; messages: readonly Message[] }[],
  before: string | undefined,
): MessageSelection[] {
  return doomed.flatMap(({ conversationId, messages }) =>
    Array.from({ length: Math.ceil(messages.length / eraseStepMessages) }, (_, index) => {
      const part = messages.slice(index * eraseStepMessages, (index + 1) * eraseStepMessages);
      return {
        conversationId,
        fromSeq: part[0]!.seq,
        toSeq: part[part.length - 1]!.seq,
        ...(before === undefined ? {} : { before }),
      };
    }),
  );
}

function addReceipts(a: ErasureReceipt, b: ErasureReceipt): ErasureReceipt {
  return {
    messages: a.messages + b.messages,
    conversations: a.conversations + b.conversations,
    vectors: a.vectors + b.vectors,
    summaries: a.summaries + b.summaries,
    facts: a.facts + b.facts,
    factsKept: a.factsKept + b.factsKept,
    relations: a.relations + b.relations,
    entities: a.entities + b.entities,
    memoryFiles: a.memoryFiles + b.memoryFiles,
    auditId: b.auditId,
  };
}

async function selectedMessages(
  store: Store,
  user: UserScope,
  selection: MessageSelection,
  options: CallOptions,
): Promise<{ conversationId: string; messages: Message[] }[]> {
  const conversationIds: string[] = [];
  if (selection.conversationId !== undefined) conversationIds.push(selection.conversationId);
  else {
    let cursor: string | undefined;
    do {
      const page = await store.listConversations(
        { ...user },
        { limit: 1000, ...(cursor === undefined ? {} : { cursor }) },
        options,
      );
      conversationIds.push(...page.items.map((conversation) => conversation.conversationId));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
  }
  const before = selection.before === undefined ? Number.POSITIVE_INFINITY : Date.parse(selection.before);
  const result: { conversationId: string; messages: Message[] }[] = [];
  for (const conversationId of conversationIds) {
    const range = {
      afterSeq: (selection.fromSeq ?? 1) - 1,
      ...(selection.toSeq === undefined ? {} : { beforeSeq: selection.toSeq + 1 }),
    };
    const messages = (await store.listMessages({ ...user, conversationId }, range, options)).filter(
      (message) => Date.parse(message.createdAt) < before,
    );
    result.push({ conversationId, messages });
  }
  return result;
}

interface MemoryWrite {
  readonly path: string;
  readonly text: string;
}

// The text each memory-tool call of an assistant message wrote into a file; calls that do not parse write nothing.
function memoryWritesOf(message: Message): MemoryWrite[] {
  return (message.toolCalls ?? []).flatMap((call) => {
    if (call.function.name !== memoryToolName) return [];
    let input: Record<string, unknown>;
    try {
      input = JSON.parse(call.function.arguments) as Record<string, unknown>;
    } catch {
      return [];
    }
    const text =
      input['command'] === 'create'
        ? input['file_text']
        : input['command'] === 'insert'
          ? input['insert_text']
          : input['command'] === 'str_replace'
            ? input['new_str']
            : undefined;
    if (typeof input['path'] !== 'string' || typeof text !== 'string' || text.trim() === '') return [];
    try {
      return [{ path: normalizeMemoryPath(input['path']), text }];
    } catch {
      return [];
    }
  });
}

async function undoWrite(
  dependencies: EraseMessagesDependencies,
  user: UserScope,
  write: MemoryWrite,
  options: CallOptions,
): Promise<number> {
  const { store } = dependencies;
  const file = await store.getMemoryFile(user, write.path, options);
  if (file === undefined || !file.content.includes(write.text)) return 0;
  const content = file.content.split(write.text).join('');
  if (content.trim() === '') return store.deleteMemoryFiles(user, write.path, options);
  await store.putMemoryFile(
    user,
    { path: write.path, content, now: new Date(dependencies.now()).toISOString(), expectedVersion: file.version },
    options,
  );
  return 1;
}
