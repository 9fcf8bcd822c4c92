import type { Message, MessageRole, Metadata, ToolCall } from '../messages/message.js';
import { fromJsonColumn, type ToIsoTime } from './knowledge-rows.js';
import type { Conversation } from './store.js';

/**
 * A `messages` row as every SQL adapter reads it (the columns of {@link messageColumns}). Times, numbers
 * and JSON arrive in the driver's own types (epoch ms or `Date`, number or numeric text, JSON text or
 * parsed JSON), so they are `unknown` here and converted by the adapter's `toIso`, `Number` and
 * {@link fromJsonColumn}.
 */
export interface MessageRow {
  readonly id: string;
  readonly seq: unknown;
  readonly role: string;
  readonly content: string;
  readonly name: string | null;
  readonly tool_calls: unknown;
  readonly tool_call_id: string | null;
  readonly created_at: unknown;
  readonly metadata: unknown;
  readonly tokens: unknown;
  readonly idempotency_key: string | null;
}

/** A `conversations` row read with the watermark and metadata columns; see {@link MessageRow}. */
export interface ConversationRow {
  readonly tenant_id: string;
  readonly user_id: string;
  readonly conversation_id: string;
  readonly created_at: unknown;
  readonly updated_at: unknown;
  readonly message_count: unknown;
  readonly total_tokens: unknown;
  readonly summarized_through_seq: unknown;
  readonly summarized_tokens: unknown;
  readonly metadata: unknown;
  /** Absent in stores (and reads) before erasure counted it. */
  readonly erased_messages?: unknown;
}

/** The columns of a message, in the order every SQL adapter selects and inserts them. */
export const messageColumns =
  'id, seq, role, content, name, tool_calls, tool_call_id, created_at, metadata, tokens, idempotency_key';

// NULL columns come back as undefined fields, so a stored message equals the NewMessage it was made from.
/** Maps a `messages` row to a stored, frozen {@link Message}. */
export function messageFromRow(row: MessageRow, toIso: ToIsoTime): Message {
  return Object.freeze({
    id: row.id,
    seq: Number(row.seq),
    role: row.role as MessageRole,
    content: row.content,
    name: row.name ?? undefined,
    toolCalls: row.tool_calls === null ? undefined : fromJsonColumn<readonly ToolCall[]>(row.tool_calls),
    toolCallId: row.tool_call_id ?? undefined,
    createdAt: toIso(row.created_at),
    metadata: row.metadata === null ? undefined : fromJsonColumn<Metadata>(row.metadata),
    idempotencyKey: row.idempotency_key ?? undefined,
    tokens: Number(row.tokens),
  });
}

/** Maps a `conversations` row to a {@link Conversation}. */
export function conversationFromRow(row: ConversationRow, toIso: ToIsoTime): Conversation {
  return {
    tenantId: row.tenant_id,
    userId: row.user_id,
    conversationId: row.conversation_id,
    createdAt: toIso(row.created_at),
    updatedAt: toIso(row.updated_at),
    messageCount: Number(row.message_count),
    totalTokens: Number(row.total_tokens),
    summarizedThroughSeq: Number(row.summarized_through_seq),
    summarizedTokens: Number(row.summarized_tokens),
    metadata: row.metadata === null || row.metadata === undefined ? undefined : fromJsonColumn<Metadata>(row.metadata),
    ...(Number(row.erased_messages ?? 0) > 0 ? { erasedMessages: Number(row.erased_messages) } : {}),
  };
}
