/** Who spoke a message, as in the OpenAI chat protocol. */
export const messageRoles = ['system', 'user', 'assistant', 'tool'] as const;

/** One of {@link messageRoles}. */
export type MessageRole = (typeof messageRoles)[number];

/** A function call requested by an assistant message (OpenAI `tool_calls` shape, camel-cased). */
export interface ToolCall {
  readonly id: string;
  readonly type: 'function';
  readonly function: { readonly name: string; readonly arguments: string };
}

/** Free-form JSON metadata the caller attaches to a message; mnemo stores it and never interprets it. */
export type Metadata = Readonly<Record<string, unknown>>;

/** What a caller hands to `append`: a message before the store gives it a place in the conversation. */
export interface MessageInput {
  readonly role: MessageRole;
  /** The text. May be empty only for an assistant message that carries tool calls. */
  readonly content: string;
  readonly name?: string;
  readonly toolCalls?: readonly ToolCall[];
  /** For a `tool` message: the id of the assistant tool call it answers. */
  readonly toolCallId?: string;
  /** ISO 8601 time the message was said; defaults to the time of the append. */
  readonly createdAt?: string;
  readonly metadata?: Metadata;
  /** A key unique within the conversation: appending the same key again returns the stored message. */
  readonly idempotencyKey?: string;
}

/** A validated message with its token count, ready for `Store.appendMessages`. */
export interface NewMessage {
  readonly role: MessageRole;
  readonly content: string;
  readonly name: string | undefined;
  readonly toolCalls: readonly ToolCall[] | undefined;
  readonly toolCallId: string | undefined;
  /** ISO 8601 with milliseconds, UTC. */
  readonly createdAt: string;
  readonly metadata: Metadata | undefined;
  readonly idempotencyKey: string | undefined;
  /** Tokens this message costs in a chat request, overhead included, counted once at append. */
  readonly tokens: number;
}

/** A message as stored: verbatim, with its gapless position `seq` (1, 2, 3, …) in its conversation. */
export interface Message extends NewMessage {
  readonly id: string;
  readonly seq: number;
}
