import type { MessageRole, ToolCall } from '../messages/message.js';
import type { RecallExplanation } from '../recall/recall.js';

/** Policies that decide which stored messages go into a context. */
export const contextPolicies = ['full', 'window', 'token-window', 'summary', 'hybrid'] as const;

/**
 * One of {@link contextPolicies}: `full` sends all that fits, newest kept; `window` the last N turns;
 * `token-window` the newest whole turns that fit; `summary` the rolling summary plus the raw turns after it;
 * `hybrid` facts + summary + recent turns + recalled snippets for the current query.
 */
export type ContextPolicy = (typeof contextPolicies)[number];

/** A message ready to send to a chat model (camel-cased; see `toOpenAiMessages` for the wire shape). */
export interface ContextMessage {
  readonly role: MessageRole;
  readonly content: string;
  readonly name?: string;
  readonly toolCalls?: readonly ToolCall[];
  readonly toolCallId?: string;
}

/** An inclusive range of message seqs. */
export interface SeqRange {
  readonly from: number;
  readonly to: number;
}

/** One part of an assembled context and what it costs. */
export interface ContextPart {
  readonly kind: 'system' | 'facts' | 'summary' | 'recent' | 'recalled';
  readonly tokens: number;
  readonly messageCount: number;
  /** Seqs of the stored messages in this part (for a summary: the messages it covers); absent for the system prompt. */
  readonly seqRange?: SeqRange;
  /** The summary used, for a `summary` part. */
  readonly summaryId?: string;
  /** True when the part was shortened to fit (a summary making room for the newest turn). */
  readonly truncated?: boolean;
  /** The facts or recalled messages in a `facts` or `recalled` part. */
  readonly items?: readonly ContextItem[];
}

/** A fact or recalled message considered for a context. */
export interface ContextItem {
  readonly kind: 'fact' | 'recalled';
  /** Fact id, or the recalled message's id. */
  readonly id: string;
  readonly conversationId?: string;
  readonly seq?: number;
  readonly tokens: number;
  /** Fused recall score, or the fact's confidence. */
  readonly score?: number;
  /** For a recalled message: its keyword rank, vector similarity and fused score ("why was this recalled"). */
  readonly explain?: RecallExplanation;
}

/** Why a fact or recalled message was considered and left out. */
export interface ExcludedItem extends ContextItem {
  /** `conversation_fits`: the whole conversation fits the budget, so it is sent verbatim and nothing else. */
  readonly reason: 'over_budget' | 'already_in_context' | 'conversation_fits';
}

/**
 * Why messages were left out of a context: outside the `window`; over the budget; represented by the
 * summary instead (`summarized`); or raw, not yet summarized, and not fitting (`awaiting_compaction`).
 */
export type DropReason = 'outside_window' | 'over_budget' | 'summarized' | 'awaiting_compaction';

/** A run of stored messages left out of the context. */
export interface DroppedMessages {
  readonly seqRange: SeqRange;
  readonly messageCount: number;
  readonly tokens: number;
  readonly reason: DropReason;
}

/** A message sent shortened because it alone did not fit the budget; its content ends with a marker. */
export interface TruncatedMessage {
  readonly seq: number;
  readonly originalTokens: number;
  readonly keptTokens: number;
}

/** What a context holds and costs, what it left out and why, and what it saved against the full history. */
export interface ContextReport {
  readonly policy: ContextPolicy;
  readonly maxTokens: number;
  /** Tokenizer encoding the counts are in. */
  readonly encoding: string;
  readonly parts: readonly ContextPart[];
  readonly dropped: readonly DroppedMessages[];
  readonly truncated: readonly TruncatedMessage[];
  /** Facts and recalled messages considered but left out (hybrid policy), and why. */
  readonly excludedItems: readonly ExcludedItem[];
  /** Tokens the request framing adds once (reply priming); included in `sentTokens`. */
  readonly requestOverheadTokens: number;
  /** Tokens of the same request carrying the system prompt and every stored message. */
  readonly fullHistoryTokens: number;
  /** Tokens of this request: parts plus overhead. Never more than `maxTokens`. */
  readonly sentTokens: number;
  readonly savedTokens: number;
  /** `savedTokens` as a percent of `fullHistoryTokens`, 0–100. */
  readonly savedPercent: number;
  /** False when the conversation has no stored message (the context then holds only the system prompt); set by `buildContext`. */
  readonly conversationFound?: boolean;
  /** How the hybrid policy recalled (absent for other policies and when there was no query to search with); `skipped` for a turn that asked nothing. */
  readonly recall?: ContextRecallReport;
  /**
   * The stable prefix (invariant 7): the leading `messageCount` messages of `messages` (system included)
   * stay byte-identical from one request to the next until the next compaction, and cost `tokens`
   * (request overhead not included). A provider's prompt cache reuses them; place cache breakpoints
   * after the last of them. 0 when nothing is stable (a sliding window).
   */
  readonly stable: ContextStablePrefix;
}

/** Where the part of a context that stays byte-identical between compactions ends. */
export interface ContextStablePrefix {
  readonly messageCount: number;
  readonly tokens: number;
}

/** When the hybrid policy recalls: for a turn that asks something, or on every turn (see `ContextDefaults.recall`). */
export const recallModes = ['when-asked', 'every-turn'] as const;
export type RecallMode = (typeof recallModes)[number];

/**
 * How a hybrid context's recall searched: `hybrid` (keyword and vector search fused) or `keyword-only`,
 * because no embedder is configured (`no_embedder`), the query embedding missed its deadline
 * (`embedding_deadline`: the embedder was saturated or slow; the request did not wait for it) or it failed
 * (`embedder_failed`: an endpoint down or rejecting its key, a model thread that died; the error goes to
 * the memory's `onQueryEmbeddingError`); or `skipped`, because the turn asked nothing and recall is
 * `when-asked` (`not_asked`).
 */
export interface ContextRecallReport {
  readonly mode: 'hybrid' | 'keyword-only' | 'skipped';
  readonly reason?: 'no_embedder' | 'embedding_deadline' | 'embedder_failed' | 'not_asked';
  /** `hybrid`: the model whose vectors ranked the vector search (a refiner's where it could, decision 0045). */
  readonly model?: string;
  /**
   * True when the turn's best match is one of the recent turns the context holds: it follows up on them,
   * so under `when-asked` its snippets got only the least room (160 tokens; decision 0044).
   */
  readonly bestInContext?: true;
}

/** The result of building a context: the messages to send and the report about them. */
export interface BuiltContext {
  readonly messages: readonly ContextMessage[];
  readonly report: ContextReport;
}
