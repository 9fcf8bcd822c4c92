import type { ContextMessage } from './context-types.js';

/** A message in the OpenAI chat-completions wire shape (snake_case tool fields). */
export interface OpenAiChatMessage {
  role: ContextMessage['role'];
  content: string | null;
  name?: string;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

/** Converts context messages to the body shape of `POST /chat/completions`. */
export function toOpenAiMessages(messages: readonly ContextMessage[]): OpenAiChatMessage[] {
  return messages.map((message) => ({
    role: message.role,
    // The protocol wants null content, not "", on an assistant message that only calls tools.
    content: message.content === '' && message.toolCalls !== undefined ? null : message.content,
    ...(message.name === undefined ? {} : { name: message.name }),
    ...(message.toolCalls === undefined
      ? {}
      : {
          tool_calls: message.toolCalls.map((call) => ({
            id: call.id,
            type: call.type,
            function: { ...call.function },
          })),
        }),
    ...(message.toolCallId === undefined ? {} : { tool_call_id: message.toolCallId }),
  }));
}
