import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type {
  LanguageModelV3CallOptions,
  LanguageModelV3GenerateResult,
  LanguageModelV3Prompt,
  LanguageModelV3StreamPart,
} from '@ai-sdk/provider';
import { createMemory, isMemoryError, type Memory } from '@mnemo/core';
import { createSqliteStore } from '@mnemo/sqlite';
import { generateText, jsonSchema, stepCountIs, streamText, tool, wrapLanguageModel } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV3 } from 'ai/test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mnemoMiddleware } from './mnemo-middleware.js';

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

/** A reply of the mock model: text, or a tool call. */
function reply(text: string): LanguageModelV3GenerateResult {
  return { content: [{ type: 'text', text }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
}

function toolCall(id: string, name: string, input: Record<string, unknown>): LanguageModelV3GenerateResult {
  return {
    content: [{ type: 'tool-call', toolCallId: id, toolName: name, input: JSON.stringify(input) }],
    finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    usage,
    warnings: [],
  };
}

/** A mock model that answers `replies` in turn and records every prompt it was sent. */
function scriptedModel(replies: LanguageModelV3GenerateResult[]) {
  const prompts: LanguageModelV3Prompt[] = [];
  const next = (options: LanguageModelV3CallOptions) => {
    prompts.push(options.prompt);
    const answer = replies.shift();
    if (answer === undefined) throw new Error('the script has no more replies');
    return answer;
  };
  const model = new MockLanguageModelV3({
    doGenerate: async (options) => next(options),
    doStream: async (options) => {
      const answer = next(options);
      const parts: LanguageModelV3StreamPart[] = [{ type: 'stream-start', warnings: [] }];
      for (const part of answer.content) {
        if (part.type === 'text') {
          parts.push(
            { type: 'text-start', id: 't' },
            ...part.text.match(/.{1,4}/gs)!.map((delta) => ({ type: 'text-delta' as const, id: 't', delta })),
            { type: 'text-end', id: 't' },
          );
        } else if (part.type === 'tool-call') parts.push(part);
      }
      parts.push({ type: 'finish', usage, finishReason: answer.finishReason });
      return { stream: convertArrayToReadableStream(parts) };
    },
  });
  return { model, prompts };
}

/** The prompt as role: text lines, so a test reads what the model was sent. */
function lines(prompt: LanguageModelV3Prompt): string[] {
  return prompt.map((message) => {
    if (message.role === 'system') return `system: ${message.content}`;
    const parts = message.content.map((part) =>
      part.type === 'text'
        ? part.text
        : part.type === 'tool-call'
          ? `call ${part.toolName}(${JSON.stringify(part.input)})`
          : part.type === 'tool-result'
            ? `result ${JSON.stringify(part.output)}`
            : part.type,
    );
    return `${message.role}: ${parts.join(' | ')}`;
  });
}

let directory: string;
let memory: Memory;

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'mnemo-ai-sdk-'));
  memory = createMemory({
    store: createSqliteStore({ path: join(directory, 'mnemo.db') }),
    compaction: false,
    knowledge: false,
  });
});

afterEach(async () => {
  await memory.close();
  await rm(directory, { recursive: true, force: true });
});

const stored = async (conversationId: string, userId = 'default') =>
  (await memory.listMessages({ userId, conversationId })).map(
    (message) =>
      `${message.role}: ${message.content}${message.toolCalls === undefined ? '' : ` ${message.toolCalls.map((call) => `call ${call.function.name}(${call.function.arguments})`).join(' ')}`}`,
  );

describe('mnemoMiddleware (library Memory, the AI SDK mock model)', () => {
  it('stores each turn and sends the model the context mnemo built, when the app sends only the new turn', async () => {
    const { model, prompts } = scriptedModel([reply('Rain after 14:00, 6 °C.'), reply('Dry, 9 °C.')]);
    const wrapped = wrapLanguageModel({
      model,
      middleware: mnemoMiddleware({ memory, scope: { conversationId: 'node-7' }, maxTokens: 1000 }),
    });

    const first = await generateText({
      model: wrapped,
      system: 'Reply in ≤150 chars.',
      prompt: "I'm Maren, relay LARCH-RIDGE. Weather tomorrow?",
    });
    const second = await generateText({ model: wrapped, system: 'Reply in ≤150 chars.', prompt: 'And the day after?' });

    expect([first.text, second.text]).toEqual(['Rain after 14:00, 6 °C.', 'Dry, 9 °C.']);
    expect(second.usage.inputTokens).toBe(10);
    expect(lines(prompts[1]!)).toEqual([
      'system: Reply in ≤150 chars.',
      "user: I'm Maren, relay LARCH-RIDGE. Weather tomorrow?",
      'assistant: Rain after 14:00, 6 °C.',
      'user: And the day after?',
    ]);
    expect(await stored('node-7')).toEqual([
      "user: I'm Maren, relay LARCH-RIDGE. Weather tomorrow?",
      'assistant: Rain after 14:00, 6 °C.',
      'user: And the day after?',
      'assistant: Dry, 9 °C.',
    ]);
    expect((await memory.stats({ conversationId: 'node-7' }))?.usage.requests).toBe(2);
  });

  it('stores nothing twice when the app resends its whole history, and sends a compact context instead of it', async () => {
    const { model, prompts } = scriptedModel([reply('A1'), reply('A2'), reply('A3')]);
    const wrapped = wrapLanguageModel({
      model,
      middleware: mnemoMiddleware({ memory, scope: { conversationId: 'chat' }, policy: 'window' }),
    });
    const history: { role: 'user' | 'assistant'; content: string }[] = [];
    for (const question of ['Q1 '.repeat(50), 'Q2', 'Q3']) {
      history.push({ role: 'user', content: question });
      const { text } = await generateText({ model: wrapped, messages: history });
      history.push({ role: 'assistant', content: text });
    }

    expect((await stored('chat')).length).toBe(6);
    expect(lines(prompts[2]!).at(-1)).toBe('user: Q3');
  });

  it('runs a tool loop: stores the tool call and its result, and each step sees both', async () => {
    const { model, prompts } = scriptedModel([
      toolCall('call-1', 'battery', { node: 'LARCH-RIDGE' }),
      reply('LARCH-RIDGE is at 45%.'),
    ]);
    const wrapped = wrapLanguageModel({
      model,
      middleware: mnemoMiddleware({ memory, scope: { conversationId: 'node-7' } }),
    });

    const result = await generateText({
      model: wrapped,
      prompt: 'Battery of LARCH-RIDGE?',
      tools: {
        battery: tool({
          inputSchema: jsonSchema<{ node: string }>({
            type: 'object',
            properties: { node: { type: 'string' } },
            required: ['node'],
          }),
          execute: async ({ node }) => ({ node, percent: 45 }),
        }),
      },
      stopWhen: stepCountIs(3),
    });

    expect(result.text).toBe('LARCH-RIDGE is at 45%.');
    expect(lines(prompts[1]!).slice(-3)).toEqual([
      'user: Battery of LARCH-RIDGE?',
      'assistant: call battery({"node":"LARCH-RIDGE"})',
      'tool: result {"type":"json","value":{"node":"LARCH-RIDGE","percent":45}}',
    ]);
    expect(await stored('node-7')).toEqual([
      'user: Battery of LARCH-RIDGE?',
      'assistant:  call battery({"node":"LARCH-RIDGE"})',
      'tool: {"node":"LARCH-RIDGE","percent":45}',
      'assistant: LARCH-RIDGE is at 45%.',
    ]);
  });

  it('stores a streamed reply once the stream ends, tool loop included', async () => {
    const { model, prompts } = scriptedModel([
      toolCall('call-1', 'battery', { node: 'PINE' }),
      reply('PINE is at 80%, charging.'),
    ]);
    const wrapped = wrapLanguageModel({
      model,
      middleware: mnemoMiddleware({ memory, scope: { conversationId: 'node-9' } }),
    });

    const result = streamText({
      model: wrapped,
      prompt: 'Battery of PINE?',
      tools: {
        battery: tool({
          inputSchema: jsonSchema<{ node: string }>({ type: 'object', properties: { node: { type: 'string' } } }),
          execute: async () => ({ percent: 80 }),
        }),
      },
      stopWhen: stepCountIs(3),
    });
    let streamed = '';
    for await (const delta of result.textStream) streamed += delta;

    expect(streamed).toBe('PINE is at 80%, charging.');
    expect(prompts).toHaveLength(2);
    expect(await stored('node-9')).toEqual([
      'user: Battery of PINE?',
      'assistant:  call battery({"node":"PINE"})',
      'tool: {"percent":80}',
      'assistant: PINE is at 80%, charging.',
    ]);
  });

  it("keeps two end users apart: one user's facts and turns never reach the other's context", async () => {
    const { model, prompts } = scriptedModel([reply('Noted.'), reply('Hello.')]);
    const wrapped = wrapLanguageModel({ model, middleware: mnemoMiddleware({ memory }) });

    await generateText({
      model: wrapped,
      prompt: 'My relay is LARCH-RIDGE.',
      providerOptions: { mnemo: { userId: 'maren', conversationId: 'node-7' } },
    });
    await generateText({
      model: wrapped,
      prompt: 'Which relay is mine? LARCH-RIDGE?',
      providerOptions: { mnemo: { userId: 'olav', conversationId: 'node-7' } },
    });

    expect(lines(prompts[1]!).join('\n')).not.toContain('My relay is LARCH-RIDGE');
    expect(await stored('node-7', 'maren')).toEqual(['user: My relay is LARCH-RIDGE.', 'assistant: Noted.']);
    expect(await stored('node-7', 'olav')).toEqual(['user: Which relay is mine? LARCH-RIDGE?', 'assistant: Hello.']);
  });

  it('stores a retried call once, and refuses a call that names no conversation before the model is called', async () => {
    let attempts = 0;
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        attempts += 1;
        if (attempts === 1) throw Object.assign(new Error('upstream overloaded'), { isRetryable: true });
        return reply('Second try.');
      },
    });
    const wrapped = wrapLanguageModel({
      model,
      middleware: mnemoMiddleware({ memory, scope: { conversationId: 'retry' } }),
    });

    await expect(generateText({ model: wrapped, prompt: 'Hello?', maxRetries: 0 })).rejects.toThrow(/overloaded/);
    await generateText({ model: wrapped, prompt: 'Hello?', maxRetries: 0 });
    const unnamed = wrapLanguageModel({ model, middleware: mnemoMiddleware({ memory }) });

    expect(await stored('retry')).toEqual(['user: Hello?', 'assistant: Second try.']);
    await expect(generateText({ model: unnamed, prompt: 'x', maxRetries: 0 })).rejects.toSatisfy((error: unknown) =>
      isMemoryError(error, 'invalid_input'),
    );
    expect(attempts).toBe(2);
  });
});
