import { MemoryError, toOpenAiMessages, type ContextMessage } from '@mnemo/core';
import { replyFromCompletion } from '../assistant-reply.js';
import { asRecord } from '../read-json.js';
import { readUpstreamUsage } from '../upstream-usage.js';
import { buildResponse, functionCallItem, messageItem, newResponsesId } from './responses-object.js';
import type { ResponsesBody } from './responses-request.js';

/**
 * The chat-completions request that asks a chat-only upstream (Ollama, vLLM, llama.cpp, …) what a
 * Responses request asks: the context as `messages`, function tools and tool choice in chat's shape,
 * `max_output_tokens` as `max_tokens`, `text.format` as `response_format`, `reasoning.effort` as
 * `reasoning_effort`, sampling, user and cache-key fields as they are, and usage asked for in a stream.
 * Fields with no chat equivalent (`store`, `metadata`, `include`, `truncation`, …) stay with mnemo.
 * Throws `invalid_input` for a tool that is not a function (web search, file search, …): a chat server cannot run it.
 */
export function toChatCompletionRequest(
  body: ResponsesBody,
  messages: readonly ContextMessage[],
  model: string | undefined,
): Record<string, unknown> {
  const tools = chatTools(body);
  const format = body.text?.format;
  const passed = pick(body, [
    'temperature',
    'top_p',
    'parallel_tool_calls',
    'user',
    'safety_identifier',
    'prompt_cache_key',
    'service_tier',
    'top_logprobs',
  ]);
  return {
    ...(model === undefined ? {} : { model }),
    messages: toOpenAiMessages(messages),
    ...passed,
    ...(tools === undefined ? {} : { tools }),
    ...(body.tool_choice === undefined ? {} : { tool_choice: chatToolChoice(body.tool_choice) }),
    ...(typeof body.max_output_tokens === 'number' ? { max_tokens: body.max_output_tokens } : {}),
    ...(format === undefined || format.type === 'text' ? {} : { response_format: chatResponseFormat(format) }),
    ...(typeof body.reasoning?.effort === 'string' ? { reasoning_effort: body.reasoning.effort } : {}),
    ...(body.stream === true ? { stream: true, stream_options: { include_usage: true } } : {}),
  };
}

/** Throws `invalid_input` (before anything is stored) when the request cannot be translated for a chat-completions upstream. */
export function checkTranslatable(body: ResponsesBody): void {
  chatTools(body);
}

/** The Responses `response` a chat completion answers with (new `resp_`, `msg_` and `fc_` ids); `undefined` when the body is no chat completion. */
export function responseFromCompletion(completion: unknown, body: ResponsesBody): Record<string, unknown> | undefined {
  const reply = replyFromCompletion(completion);
  if (reply === undefined) return undefined;
  const output = [
    ...(reply.content === '' ? [] : [messageItem(newResponsesId('msg'), reply.content, 'completed')]),
    ...reply.toolCalls.map((call) =>
      functionCallItem(
        newResponsesId('fc'),
        { id: call.id, name: call.function.name, arguments: call.function.arguments },
        'completed',
      ),
    ),
  ];
  const incompleteReason = incompleteReasonOf(reply.finishReason);
  const usage = readUpstreamUsage(asRecord(completion)?.usage);
  return buildResponse(
    {
      id: newResponsesId('resp'),
      createdAt: Math.floor(Date.now() / 1000),
      model: reply.model ?? body.model ?? '',
      status: incompleteReason === undefined ? 'completed' : 'incomplete',
      ...(incompleteReason === undefined ? {} : { incompleteReason }),
      output,
      ...(usage === undefined ? {} : { usage }),
    },
    body,
  );
}

/** A chat finish reason that leaves a Responses reply incomplete: `length` → `max_output_tokens`, `content_filter`. */
export function incompleteReasonOf(finishReason: string | undefined): string | undefined {
  if (finishReason === 'length') return 'max_output_tokens';
  if (finishReason === 'content_filter') return 'content_filter';
  return undefined;
}

function chatTools(body: ResponsesBody): unknown[] | undefined {
  return body.tools?.map((tool, index) => {
    if (tool.type !== 'function') {
      throw new MemoryError(
        'invalid_input',
        `body.tools[${index}]: the upstream speaks chat completions, which has no "${tool.type}" tool; only function tools are translated (set llm.responsesApi to "forward" for an upstream that speaks Responses)`,
        { details: { field: `body.tools[${index}]` } },
      );
    }
    return { type: 'function', function: pick(tool, ['name', 'description', 'parameters', 'strict']) };
  });
}

function chatToolChoice(choice: unknown): unknown {
  const named = asRecord(choice);
  if (named?.type === 'function' && typeof named.name === 'string')
    return { type: 'function', function: { name: named.name } };
  if (named?.type === 'allowed_tools') return named.mode === 'required' ? 'required' : 'auto';
  return choice;
}

function chatResponseFormat(format: Readonly<Record<string, unknown>>): unknown {
  if (format.type !== 'json_schema') return { type: format.type };
  return { type: 'json_schema', json_schema: pick(format, ['name', 'description', 'schema', 'strict']) };
}

function pick(source: Readonly<Record<string, unknown>>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(
    keys.flatMap((key) => (source[key] === undefined || source[key] === null ? [] : [[key, source[key]]])),
  );
}
