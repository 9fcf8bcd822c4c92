import type { LanguageModelV3CallOptions, LanguageModelV3Prompt } from '@ai-sdk/provider';
import { isMemoryError } from '@mnemo/core';
import { generateText, streamText, wrapLanguageModel } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV3 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeWorkDirectory, startMnemo, type StartedMnemo } from '../../cli/test/run-mnemo.js';
import { mnemoMiddleware } from '../src/index.js';

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

let work: Awaited<ReturnType<typeof makeWorkDirectory>>;
let serve: StartedMnemo;
let url: string;

beforeAll(async () => {
  work = await makeWorkDirectory();
  serve = await startMnemo(['serve', '--port', '0', '--db', 'bot.db', '--workers', '0'], {
    cwd: work.path,
    env: { MNEMO_API_KEYS: 'key-a:tenant-a' },
    ready: /^mnemo listening on (http:\/\/\S+)$/,
  });
  url = serve.ready[1]!;
}, 30_000);

afterAll(async () => {
  serve.child.kill('SIGTERM');
  await serve.exited;
  await work.remove();
});

function model(replies: string[]) {
  const prompts: LanguageModelV3Prompt[] = [];
  const next = (options: LanguageModelV3CallOptions) => {
    prompts.push(options.prompt);
    return replies.shift() ?? 'no more replies';
  };
  return {
    prompts,
    model: new MockLanguageModelV3({
      doGenerate: async (options) => ({
        content: [{ type: 'text', text: next(options) }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage,
        warnings: [],
      }),
      doStream: async (options) => {
        const text = next(options);
        return {
          stream: convertArrayToReadableStream([
            { type: 'text-start', id: 't' },
            ...text
              .split(' ')
              .map((word, index) => ({ type: 'text-delta' as const, id: 't', delta: index === 0 ? word : ` ${word}` })),
            { type: 'text-end', id: 't' },
            { type: 'finish', usage, finishReason: { unified: 'stop', raw: 'stop' } },
          ]),
        };
      },
    }),
  };
}

const texts = (prompt: LanguageModelV3Prompt) =>
  prompt.map((message) =>
    message.role === 'system'
      ? message.content
      : message.content.map((part) => ('text' in part ? part.text : part.type)).join(''),
  );

describe('mnemoMiddleware against the real mnemo serve (the CLI process on loopback)', () => {
  it('stores turns over HTTP, streamed and not, and the next call gets them back as context', async () => {
    const { model: mock, prompts } = model(['Rain after 14:00, 6 °C.', 'Dry and 9 °C the day after.']);
    const wrapped = wrapLanguageModel({
      model: mock,
      middleware: mnemoMiddleware({
        memory: { server: { baseUrl: url, apiKey: 'key-a' } },
        scope: { conversationId: 'node-7' },
        maxTokens: 1000,
      }),
    });

    await generateText({
      model: wrapped,
      system: 'Reply in ≤150 chars.',
      prompt: "I'm Maren, relay LARCH-RIDGE. Weather tomorrow?",
    });
    const streamed = streamText({ model: wrapped, system: 'Reply in ≤150 chars.', prompt: 'And the day after?' });
    let text = '';
    for await (const delta of streamed.textStream) text += delta;

    expect(text).toBe('Dry and 9 °C the day after.');
    expect(texts(prompts[1]!)).toEqual([
      'Reply in ≤150 chars.',
      "I'm Maren, relay LARCH-RIDGE. Weather tomorrow?",
      'Rain after 14:00, 6 °C.',
      'And the day after?',
    ]);
    // node-7, named without a user, is its own end user on the server, as the seed API and the proxy file it.
    const stored = await fetch(`${url}/v1/conversations/node-7/messages`, {
      headers: { authorization: 'Bearer key-a' },
    });
    expect(((await stored.json()) as { items: { content: string }[] }).items.map((message) => message.content)).toEqual(
      [
        "I'm Maren, relay LARCH-RIDGE. Weather tomorrow?",
        'Rain after 14:00, 6 °C.',
        'And the day after?',
        'Dry and 9 °C the day after.',
      ],
    );
  });

  it("keeps two end users apart over HTTP and reports the server's errors as MemoryErrors", async () => {
    const { model: mock, prompts } = model(['Noted.', 'Hello.']);
    const wrapped = wrapLanguageModel({
      model: mock,
      middleware: mnemoMiddleware({ memory: { server: { baseUrl: url, apiKey: 'key-a' } } }),
    });
    const badKey = wrapLanguageModel({
      model: mock,
      middleware: mnemoMiddleware({
        memory: { server: { baseUrl: url, apiKey: 'wrong' } },
        scope: { conversationId: 'x' },
      }),
    });

    await generateText({
      model: wrapped,
      prompt: 'My relay is LARCH-RIDGE.',
      providerOptions: { mnemo: { userId: 'maren', conversationId: 'chat' } },
    });
    await generateText({
      model: wrapped,
      prompt: 'Which relay, LARCH-RIDGE?',
      providerOptions: { mnemo: { userId: 'olav', conversationId: 'chat' } },
    });

    expect(texts(prompts[1]!).join('\n')).not.toContain('My relay is');
    await expect(generateText({ model: badKey, prompt: 'x', maxRetries: 0 })).rejects.toSatisfy((error: unknown) =>
      isMemoryError(error, 'unauthorized'),
    );
    expect(prompts).toHaveLength(2);
  });
});
