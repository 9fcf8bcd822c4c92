import Anthropic from '@anthropic-ai/sdk';
import { createOpenAI } from '@ai-sdk/openai';
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { tool as langchainTool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import {
  Agent,
  OpenAIProvider,
  Runner,
  setTracingDisabled,
  tool as agentTool,
  type AgentInputItem,
} from '@openai/agents';
import { generateText, stepCountIs, streamText, tool as aiTool, type ModelMessage } from 'ai';
import OpenAI from 'openai';
import { z } from 'zod';

/** What one model call of a conversation reported, as the client parsed it. */
export interface ParsedUsage {
  readonly inputTokens: number | undefined;
  readonly outputTokens: number | undefined;
  readonly cachedInputTokens: number | undefined;
  /** Anthropic only: prompt tokens written to the cache. */
  readonly cacheWriteTokens?: number | undefined;
}

/** What a client's conversation turn ended with: the final text and the usage of its last model call. */
export interface TurnResult {
  readonly text: string;
  readonly usage: ParsedUsage;
}

/** One client SDK driving a conversation through mnemo: each `ask` is a user turn that calls the tool once and answers. */
export interface ClientDriver {
  ask(question: string): Promise<TurnResult>;
}

/** How a driver reaches mnemo and names its end user. */
export interface DriverOptions {
  readonly url: string;
  readonly user: string;
  readonly stream: boolean;
}

const weatherDescription = 'The weather forecast of a city';
const forecast = (city: string) => `sunny, 7 degrees in ${city}`;

setTracingDisabled(true);

/** The Vercel AI SDK's default provider call, `openai('model')`, which speaks Responses; the user in `X-Mnemo-User`. */
export function aiSdkDriver({ url, user, stream }: DriverOptions): ClientDriver {
  const openai = createOpenAI({ baseURL: `${url}/v1`, apiKey: 'client-key', headers: { 'X-Mnemo-User': user } });
  const tools = {
    get_weather: aiTool({
      description: weatherDescription,
      inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }) => forecast(city),
    }),
  };
  const messages: ModelMessage[] = [];
  return {
    async ask(question) {
      messages.push({ role: 'user', content: question });
      const options = { model: openai('scripted-model'), tools, stopWhen: stepCountIs(3), messages: [...messages] };
      if (stream) {
        const result = streamText({
          ...options,
          onError: ({ error }) => {
            throw error;
          },
        });
        const text = await result.text;
        messages.push(...(await result.response).messages);
        return { text, usage: aiUsage(await result.usage) };
      }
      const result = await generateText(options);
      messages.push(...result.response.messages);
      return { text: result.text, usage: aiUsage(result.usage) };
    },
  };
}

function aiUsage(usage: {
  inputTokens: number | undefined;
  outputTokens: number | undefined;
  inputTokenDetails: { cacheReadTokens: number | undefined };
}): ParsedUsage {
  return {
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    cachedInputTokens: usage.inputTokenDetails.cacheReadTokens,
  };
}

/** The Agents SDK's default (its OpenAI provider on Responses); the user in the body's `user` (`providerData`). */
export function agentsDriver({ url, user, stream }: DriverOptions): ClientDriver {
  const runner = new Runner({ modelProvider: new OpenAIProvider({ baseURL: `${url}/v1`, apiKey: 'client-key' }) });
  const agent = new Agent({
    name: 'Weather',
    instructions: 'Answer questions about the weather; call get_weather for a forecast.',
    tools: [
      agentTool({
        name: 'get_weather',
        description: weatherDescription,
        parameters: z.object({ city: z.string() }),
        execute: async ({ city }) => forecast(city),
      }),
    ],
    modelSettings: { providerData: { user } },
  });
  let history: AgentInputItem[] = [];
  return {
    async ask(question) {
      const input: AgentInputItem[] = [...history, { role: 'user', content: question }];
      const result = stream ? await runner.run(agent, input, { stream: true }) : await runner.run(agent, input);
      if ('completed' in result) {
        for await (const _event of result) void _event;
        await result.completed;
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrows what the SDK caught, whatever it is
        if (result.error !== null && result.error !== undefined) throw result.error;
      }
      history = result.history;
      const last = result.rawResponses.at(-1)?.usage;
      return {
        text: String(result.finalOutput),
        usage: {
          inputTokens: last?.inputTokens,
          outputTokens: last?.outputTokens,
          cachedInputTokens: last?.inputTokensDetails?.[0]?.cached_tokens,
        },
      };
    },
  };
}

const chatTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: weatherDescription,
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

/** The openai SDK's chat completions, full history resent each call; the user in the body's `user`. */
export function openAiChatDriver({ url, user, stream }: DriverOptions): ClientDriver {
  const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'client-key', maxRetries: 0 });
  const messages: OpenAI.ChatCompletionMessageParam[] = [
    { role: 'system', content: 'Answer questions about the weather.' },
  ];
  const call = async (): Promise<OpenAI.ChatCompletion> => {
    const body = { model: 'scripted-model', messages, tools: [chatTool], user };
    if (!stream) return client.chat.completions.create(body);
    return client.chat.completions.stream({ ...body, stream_options: { include_usage: true } }).finalChatCompletion();
  };
  return loop(
    async () => {
      const completion = await call();
      const message = completion.choices[0]!.message;
      messages.push({
        role: 'assistant',
        content: message.content,
        ...(message.tool_calls === undefined ? {} : { tool_calls: message.tool_calls }),
      });
      const usage = {
        inputTokens: completion.usage?.prompt_tokens,
        outputTokens: completion.usage?.completion_tokens,
        cachedInputTokens: completion.usage?.prompt_tokens_details?.cached_tokens,
      };
      const calls = (message.tool_calls ?? []).flatMap((entry) => (entry.type === 'function' ? [entry] : []));
      for (const entry of calls)
        messages.push({
          role: 'tool',
          tool_call_id: entry.id,
          content: forecast((JSON.parse(entry.function.arguments) as { city: string }).city),
        });
      return { done: calls.length === 0, text: message.content ?? '', usage };
    },
    (question) => messages.push({ role: 'user', content: question }),
  );
}

/** The openai SDK's Responses, full item history resent each call; the user in `safety_identifier`. */
export function openAiResponsesDriver({ url, user, stream }: DriverOptions): ClientDriver {
  const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'client-key', maxRetries: 0 });
  const input: OpenAI.Responses.ResponseInputItem[] = [];
  const tools: OpenAI.Responses.Tool[] = [
    {
      type: 'function',
      name: 'get_weather',
      description: weatherDescription,
      parameters: chatTool.function.parameters,
      strict: false,
    },
  ];
  return loop(
    async () => {
      const body = {
        model: 'scripted-model',
        instructions: 'Answer questions about the weather.',
        input,
        tools,
        safety_identifier: user,
      };
      const response = stream
        ? await client.responses.stream(body).finalResponse()
        : await client.responses.create(body);
      input.push(...(response.output as OpenAI.Responses.ResponseInputItem[]));
      const calls = response.output.flatMap((item) => (item.type === 'function_call' ? [item] : []));
      for (const call of calls)
        input.push({
          type: 'function_call_output',
          call_id: call.call_id,
          output: forecast((JSON.parse(call.arguments) as { city: string }).city),
        });
      const usage = {
        inputTokens: response.usage?.input_tokens,
        outputTokens: response.usage?.output_tokens,
        cachedInputTokens: response.usage?.input_tokens_details.cached_tokens,
      };
      // A stream's final response carries no `output_text` (the SDK adds it to non-streamed ones only).
      const text = response.output
        .flatMap((item) =>
          item.type === 'message'
            ? item.content.flatMap((part) => (part.type === 'output_text' ? [part.text] : []))
            : [],
        )
        .join('');
      return { done: calls.length === 0, text, usage };
    },
    (question) => input.push({ role: 'user', content: question }),
  );
}

/** LangChain's `ChatOpenAI` (chat completions by default) with a bound tool; the user in `X-Mnemo-User`. */
export function langChainDriver({ url, user, stream }: DriverOptions): ClientDriver {
  const weather = langchainTool(async ({ city }: { city: string }) => forecast(city), {
    name: 'get_weather',
    description: weatherDescription,
    schema: z.object({ city: z.string() }),
  });
  const model = new ChatOpenAI({
    model: 'scripted-model',
    apiKey: 'client-key',
    maxRetries: 0,
    configuration: { baseURL: `${url}/v1`, defaultHeaders: { 'X-Mnemo-User': user } },
  }).bindTools([weather]);
  const messages: BaseMessage[] = [];
  return loop(
    async () => {
      let reply: AIMessage;
      if (stream) {
        let whole: Awaited<ReturnType<typeof model.invoke>> | undefined;
        for await (const chunk of await model.stream(messages))
          whole = whole === undefined ? chunk : whole.concat(chunk);
        reply = new AIMessage({
          content: whole!.content,
          tool_calls: whole!.tool_calls ?? [],
          ...(whole!.usage_metadata === undefined ? {} : { usage_metadata: whole!.usage_metadata }),
        });
      } else reply = await model.invoke(messages);
      messages.push(reply);
      for (const call of reply.tool_calls ?? [])
        messages.push(new ToolMessage({ tool_call_id: call.id!, content: forecast(String(call.args.city)) }));
      const usage = {
        inputTokens: reply.usage_metadata?.input_tokens,
        outputTokens: reply.usage_metadata?.output_tokens,
        cachedInputTokens: reply.usage_metadata?.input_token_details?.cache_read,
      };
      return {
        done: (reply.tool_calls ?? []).length === 0,
        text: typeof reply.content === 'string' ? reply.content : JSON.stringify(reply.content),
        usage,
      };
    },
    (question) => messages.push(new HumanMessage(question)),
  );
}

/** `@anthropic-ai/sdk` Messages with a tool, full history resent each call; the user in `metadata.user_id`. */
export function anthropicDriver({ url, user, stream }: DriverOptions): ClientDriver {
  const client = new Anthropic({ baseURL: url, apiKey: 'client-key', maxRetries: 0 });
  const messages: Anthropic.MessageParam[] = [];
  const tools: Anthropic.Tool[] = [
    {
      name: 'get_weather',
      description: weatherDescription,
      input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  ];
  return loop(
    async () => {
      const body = {
        model: 'scripted-claude',
        max_tokens: 256,
        system: 'Answer questions about the weather.',
        messages,
        tools,
        metadata: { user_id: user },
      };
      const message = stream ? await client.messages.stream(body).finalMessage() : await client.messages.create(body);
      messages.push({ role: 'assistant', content: message.content });
      const uses = message.content.flatMap((block) => (block.type === 'tool_use' ? [block] : []));
      if (uses.length > 0)
        messages.push({
          role: 'user',
          content: uses.map((use) => ({
            type: 'tool_result' as const,
            tool_use_id: use.id,
            content: forecast((use.input as { city: string }).city),
          })),
        });
      const text = message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
      const { usage } = message;
      return {
        done: uses.length === 0,
        text,
        usage: {
          inputTokens:
            usage.input_tokens + (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0),
          outputTokens: usage.output_tokens,
          cachedInputTokens: usage.cache_read_input_tokens ?? undefined,
          cacheWriteTokens: usage.cache_creation_input_tokens ?? undefined,
        },
      };
    },
    (question) => messages.push({ role: 'user', content: question }),
  );
}

// A client's own tool loop: the user turn, then model calls (each answered tool call run) until one answers in text.
function loop(
  step: () => Promise<{ done: boolean; text: string; usage: ParsedUsage }>,
  addQuestion: (question: string) => void,
): ClientDriver {
  return {
    async ask(question) {
      addQuestion(question);
      for (let calls = 0; calls < 4; calls += 1) {
        const result = await step();
        if (result.done) return { text: result.text, usage: result.usage };
      }
      throw new Error('the model never answered in text');
    },
  };
}
