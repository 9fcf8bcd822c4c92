import { buildContext } from '../context/build-context.js';
import { assertContextOptions, resolveContextDefaults, type ContextDefaults, type ContextOptions } from '../context/context-options.js';
import type { BuiltContext } from '../context/context-types.js';
import { MemoryError } from '../errors/memory-error.js';
import { checkToolSequence } from '../messages/check-tool-sequence.js';
import type { Message, MessageInput } from '../messages/message.js';
import { prepareMessages } from '../messages/prepare-messages.js';
import { resolveScope, resolveUserScope, type ScopeInput } from '../messages/scope.js';
import { defaultMessageLimits, type MessageLimits } from '../messages/validate-message.js';
import type { CallOptions, Conversation, EraseResult, Page, PageOptions, Store } from '../store/store.js';
import { createGptTokenCounter } from '../tokens/gpt-token-counter.js';
import type { TokenCounter } from '../tokens/token-counter.js';
import { getConversationStats, type ConversationStats } from './conversation-stats.js';

/** Options of {@link createMemory}. Only `store` is required. */
export interface MemoryOptions {
  readonly store: Store;
  /** Default: gpt-tokenizer with `o200k_base`. */
  readonly tokenCounter?: TokenCounter;
  /** Limits on appended messages; missing fields take {@link defaultMessageLimits}. */
  readonly limits?: Partial<MessageLimits>;
  /** Context defaults; missing fields take the built-in ones (policy `token-window`, 2,000 tokens, 4 turns). */
  readonly context?: Partial<ContextDefaults>;
  /** Clock for message and ledger times, in epoch ms; default `Date.now`. */
  readonly now?: () => number;
}

/** Who to erase: one conversation, or (without `conversationId`) everything of a user. */
export interface EraseTarget {
  readonly tenantId?: string;
  readonly userId?: string;
  readonly conversationId?: string;
}

/** The memory engine a library user calls. Every method validates its input (`invalid_input`). */
export interface Memory {
  /** Appends one message or a batch, atomically and in order; returns them as stored (with `seq`). */
  append(scope: ScopeInput, messages: MessageInput | readonly MessageInput[], options?: CallOptions): Promise<Message[]>;
  /** Builds the context to send for a conversation and records it in the usage ledger. */
  buildContext(scope: ScopeInput, options?: ContextOptions): Promise<BuiltContext>;
  /** Reads stored messages of a conversation, oldest first (`afterSeq` and `limit` to page). */
  listMessages(scope: ScopeInput, range?: { afterSeq?: number; limit?: number }, options?: CallOptions): Promise<Message[]>;
  /** Counters and usage of one conversation; `undefined` when it has no messages. */
  stats(scope: ScopeInput, options?: CallOptions): Promise<ConversationStats | undefined>;
  /** Conversations of a tenant, or of one of its users, cursor-paged. */
  listConversations(filter?: { tenantId?: string; userId?: string }, page?: PageOptions, options?: CallOptions): Promise<Page<Conversation>>;
  /** Erases a conversation, or every conversation of a user. */
  erase(target: EraseTarget, options?: CallOptions): Promise<EraseResult>;
  /** The counter every stored message was counted with. */
  readonly tokenCounter: TokenCounter;
  /** Closes the store. */
  close(): Promise<void>;
}

// How far back append looks for the assistant message that a tool result answers.
const toolLookbackMessages = 64;

/** Wires a store, a token counter and the context builder into a {@link Memory}. */
export function createMemory(options: MemoryOptions): Memory {
  const { store } = options;
  const tokenCounter = options.tokenCounter ?? createGptTokenCounter();
  const limits: MessageLimits = Object.freeze({ ...defaultMessageLimits, ...options.limits });
  const contextDefaults = resolveContextDefaults(options.context);
  const now = options.now ?? Date.now;

  return Object.freeze({
    tokenCounter,
    async append(scopeInput: ScopeInput, input: MessageInput | readonly MessageInput[], callOptions?: CallOptions) {
      const scope = resolveScope(scopeInput);
      const batch = prepareMessages(input, { limits, counter: tokenCounter, now });
      if (batch.some((message) => message.role === 'tool')) {
        const tail = await store.listMessages(scope, { order: 'desc', limit: toolLookbackMessages }, callOptions);
        checkToolSequence(tail.reverse(), batch);
      }
      return store.appendMessages(scope, batch, callOptions);
    },
    async buildContext(scopeInput: ScopeInput, contextOptions: ContextOptions = {}) {
      return buildContext(store, tokenCounter, resolveScope(scopeInput), assertContextOptions(contextOptions, contextDefaults), now);
    },
    async listMessages(scopeInput: ScopeInput, range: { afterSeq?: number; limit?: number } = {}, callOptions?: CallOptions) {
      return store.listMessages(resolveScope(scopeInput), range, callOptions);
    },
    async stats(scopeInput: ScopeInput, callOptions?: CallOptions) {
      return getConversationStats(store, resolveScope(scopeInput), callOptions);
    },
    async listConversations(filter: { tenantId?: string; userId?: string } = {}, page?: PageOptions, callOptions?: CallOptions) {
      const user = resolveUserScope(filter);
      return store.listConversations(filter.userId === undefined ? { tenantId: user.tenantId } : user, page, callOptions);
    },
    async erase(target: EraseTarget, callOptions?: CallOptions) {
      if (target.conversationId !== undefined) return store.deleteConversation(resolveScope({ ...target, conversationId: target.conversationId }), callOptions);
      if (target.userId === undefined) throw new MemoryError('invalid_input', 'erase needs a conversationId or a userId', { details: { field: 'userId' } });
      return store.deleteUser(resolveUserScope(target), callOptions);
    },
    close: () => store.close(),
  });
}
