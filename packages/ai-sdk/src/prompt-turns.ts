import type {
  LanguageModelV3Content,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3ToolResultOutput,
} from '@ai-sdk/provider';
import type { MessageInput, OpenAiChatMessage } from '@mnemo/core';
import type { StoredTurn } from './mnemo-backend.js';

/** A prompt split the way the middleware reads it. */
export interface PromptTurns {
  /** The system messages, joined: mnemo pins them first as the context's system prompt. */
  readonly system: string | undefined;
  /** The prompt messages after its last assistant message: the turns mnemo has not stored yet. */
  readonly fresh: readonly LanguageModelV3Message[];
  /** `fresh` as mnemo messages (a tool message with several results becomes one mnemo message each). */
  readonly toStore: readonly MessageInput[];
  /** The text of the prompt's last user message: the query recall searches with. */
  readonly query: string | undefined;
}

/**
 * Reads a prompt: everything after its last assistant message is new (the user's turn, or the tool
 * results of a tool loop's next step), everything before it mnemo already holds, since the middleware
 * stored every earlier reply. So an app may send the whole history or only the new turn.
 */
export function readPrompt(prompt: LanguageModelV3Prompt): PromptTurns {
  const systems = prompt.flatMap((message) => (message.role === 'system' ? [message.content] : []));
  const lastAssistant = prompt.findLastIndex((message) => message.role === 'assistant');
  const fresh = prompt.slice(lastAssistant + 1).filter((message) => message.role !== 'system');
  const lastUser = prompt.findLast((message) => message.role === 'user');
  return {
    system: systems.length === 0 ? undefined : systems.join('\n\n'),
    fresh,
    toStore: fresh.flatMap(storedOf),
    query: lastUser === undefined ? undefined : textOf(lastUser.content),
  };
}

/** True when the stored tail already ends with these turns: a retry of the same call, stored once. */
export function endsWith(tail: readonly StoredTurn[], turns: readonly MessageInput[]): boolean {
  if (turns.length === 0 || tail.length < turns.length) return false;
  const last = tail.slice(tail.length - turns.length);
  return turns.every(
    (turn, index) =>
      last[index]!.role === turn.role &&
      last[index]!.content === turn.content &&
      last[index]!.toolCallId === turn.toolCallId,
  );
}

/** The assistant message to store for a model's reply (text and tool calls), or `undefined` when it said nothing storable. */
export function replyOf(content: readonly LanguageModelV3Content[]): MessageInput | undefined {
  const text = content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
  const toolCalls = content.flatMap((part) =>
    part.type === 'tool-call' && part.providerExecuted !== true
      ? [{ id: part.toolCallId, type: 'function' as const, function: { name: part.toolName, arguments: part.input } }]
      : [],
  );
  if (text === '' && toolCalls.length === 0) return undefined;
  return {
    role: 'assistant',
    content: text,
    ...(toolCalls.length === 0 ? {} : { toolCalls }),
    metadata: { source: 'ai-sdk' },
  };
}

/**
 * The built context as an AI SDK prompt; its tail (the fresh turns, as stored) is given back as the
 * app sent it, so files, provider options and JSON tool results of the current turn reach the model intact.
 */
export function toPrompt(context: readonly OpenAiChatMessage[], turns: PromptTurns): LanguageModelV3Prompt {
  const toolNames = new Map<string, string>();
  const prompt: LanguageModelV3Prompt = context.map((message): LanguageModelV3Message => {
    switch (message.role) {
      case 'system':
        return { role: 'system', content: message.content ?? '' };
      case 'user':
        return { role: 'user', content: [{ type: 'text', text: message.content ?? '' }] };
      case 'assistant': {
        for (const call of message.tool_calls ?? []) toolNames.set(call.id, call.function.name);
        return {
          role: 'assistant',
          content: [
            ...(message.content === null || message.content === ''
              ? []
              : [{ type: 'text' as const, text: message.content }]),
            ...(message.tool_calls ?? []).map((call) => ({
              type: 'tool-call' as const,
              toolCallId: call.id,
              toolName: call.function.name,
              input: parseInput(call.function.arguments),
            })),
          ],
        };
      }
      case 'tool': {
        const toolCallId = message.tool_call_id ?? '';
        return {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId,
              toolName: toolNames.get(toolCallId) ?? message.name ?? 'tool',
              output: { type: 'text', value: message.content ?? '' },
            },
          ],
        };
      }
    }
  });
  const storedCount = turns.toStore.length;
  const tail = context.slice(context.length - storedCount);
  const sameTail =
    storedCount > 0 &&
    tail.length === storedCount &&
    tail.every(
      (message, index) =>
        message.role === turns.toStore[index]!.role && (message.content ?? '') === turns.toStore[index]!.content,
    );
  return sameTail ? [...prompt.slice(0, prompt.length - storedCount), ...turns.fresh] : prompt;
}

function storedOf(message: LanguageModelV3Message): MessageInput[] {
  switch (message.role) {
    case 'system':
      return [];
    case 'user':
      return [{ role: 'user', content: textOf(message.content) }];
    case 'assistant':
      // Never fresh: the fresh turns are those after the last assistant message.
      return [];
    case 'tool':
      return message.content.flatMap((part) =>
        part.type === 'tool-result'
          ? [
              {
                role: 'tool' as const,
                content: outputText(part.output),
                toolCallId: part.toolCallId,
                name: part.toolName,
              },
            ]
          : [],
      );
  }
}

/** A user message's text; a part that is no text (an image, a file) is stored as a short note of what it was. */
function textOf(content: Extract<LanguageModelV3Message, { role: 'user' }>['content']): string {
  return content
    .map((part) =>
      part.type === 'text'
        ? part.text
        : `[${part.mediaType} file${part.filename === undefined ? '' : ` ${part.filename}`}]`,
    )
    .join('\n');
}

function outputText(output: LanguageModelV3ToolResultOutput): string {
  switch (output.type) {
    case 'text':
    case 'error-text':
      return output.value;
    case 'json':
    case 'error-json':
      return JSON.stringify(output.value);
    case 'execution-denied':
      return `execution denied${output.reason === undefined ? '' : `: ${output.reason}`}`;
    case 'content':
      return output.value
        .map((part) => (part.type === 'text' ? part.text : `[${'mediaType' in part ? part.mediaType : 'file'}]`))
        .join('\n');
  }
}

function parseInput(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
