import {
  createGptTokenCounter,
  ExtractiveSummarizer,
  isMemoryError,
  type SummarizeInput,
  type SummarizeResult,
  type Summarizer,
} from '@mnemo/core';
import { buildSummarizePrompt } from '@mnemo/core/internals';
import { afterEach, describe, expect, it } from 'vitest';
import {
  startScriptedOpenAiServer,
  type ScriptedOpenAiServer,
  type ScriptedReply,
} from '../testing/scripted-openai-server.js';
import { OpenAiSummarizer, type OpenAiSummarizerOptions } from './openai-summarizer.js';

const tokenCounter = createGptTokenCounter();
const previousSummary = '[2024-05-01]\nuser: My node is !a3f9c2d1 on channel 3.';
const input: SummarizeInput = {
  previousSummary,
  messages: [
    {
      seq: 11,
      role: 'user',
      content: 'I moved the relay to Ridge Hill, 1,240 m up.',
      createdAt: '2024-05-02T08:15:00.000Z',
    },
    {
      seq: 12,
      role: 'assistant',
      content: 'Noted: relay at Ridge Hill, 1,240 m.',
      createdAt: '2024-05-02T08:15:05.000Z',
    },
    { seq: 13, role: 'user', content: 'Call me Ana from now on, not Anna.', createdAt: '2024-05-02T08:16:00.000Z' },
  ],
  maxSummaryTokens: 60,
};
const goodSummary =
  'Ana (not Anna) runs node !a3f9c2d1 on channel 3; relay moved to Ridge Hill, 1,240 m, on 2024-05-02.';

let server: ScriptedOpenAiServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setUp(replies: readonly ScriptedReply[], options: Partial<OpenAiSummarizerOptions> = {}) {
  server = await startScriptedOpenAiServer({ replies });
  const summarizer = new OpenAiSummarizer({
    baseUrl: server.baseUrl,
    model: 'summary-model',
    tokenCounter,
    timeoutMs: 5_000,
    ...options,
  });
  return { server, summarizer };
}

/** What the default fallback writes for `input`: a fallback result must carry exactly this text. */
async function extractive(target: SummarizeInput = input): Promise<SummarizeResult> {
  return new ExtractiveSummarizer({ tokenCounter }).summarize(target);
}

function countedPrompt(target: SummarizeInput = input): number {
  return buildSummarizePrompt(target).reduce(
    (sum, message) => sum + tokenCounter.countMessage({ role: message.role, content: message.content ?? '' }),
    tokenCounter.requestOverheadTokens,
  );
}

describe('OpenAiSummarizer', () => {
  it('returns the reply with the provider usage when the model answers well, having sent the previous summary', async () => {
    const { server, summarizer } = await setUp([
      { content: goodSummary, usage: { promptTokens: 312, completionTokens: 29 } },
    ]);

    const result = await summarizer.summarize(input);

    expect(result).toEqual({
      content: goodSummary,
      summarizer: 'openai:summary-model',
      inputTokens: 312,
      outputTokens: 29,
    });
    expect(server.requests).toHaveLength(1);
    const body = server.requests[0]!.body as {
      model: string;
      max_tokens: number;
      temperature: number;
      messages: { role: string; content: string }[];
    };
    expect(body).toMatchObject({ model: 'summary-model', max_tokens: 60, temperature: 0 });
    expect(body.messages).toEqual(buildSummarizePrompt(input));
    expect(body.messages[1]!.content).toContain('My node is !a3f9c2d1 on channel 3.');
    expect(body.messages[1]!.content).toContain('Call me Ana from now on');
  });

  it('counts tokens with the token counter when the endpoint reports no usage', async () => {
    const body = {
      id: 'c1',
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: goodSummary }, finish_reason: 'stop' }],
    };
    const { summarizer } = await setUp([{ status: 200, body }]);

    const result = await summarizer.summarize(input);

    expect(result.content).toBe(goodSummary);
    expect(result.inputTokens).toBe(countedPrompt());
    expect(result.outputTokens).toBe(tokenCounter.countText(goodSummary));
    expect(result.fallbackReason).toBeUndefined();
  });

  it('drops a leading "Updated summary:" label when the model repeats the prompt\'s last line', async () => {
    const { summarizer } = await setUp([{ content: `Updated summary:\n${goodSummary}` }]);

    expect((await summarizer.summarize(input)).content).toBe(goodSummary);
  });

  it('retries and returns the reply when the first attempt gets a 500', async () => {
    const { server, summarizer } = await setUp([{ status: 500 }, { content: goodSummary }]);

    const result = await summarizer.summarize(input);

    expect(result.content).toBe(goodSummary);
    expect(result.summarizer).toBe('openai:summary-model');
    expect(result.fallbackReason).toBeUndefined();
    expect(server.requests).toHaveLength(2);
  });

  it('retries and returns the reply when the first attempt is rate limited with a 429', async () => {
    const { server, summarizer } = await setUp([{ status: 429 }, { content: goodSummary }]);

    expect((await summarizer.summarize(input)).content).toBe(goodSummary);
    expect(server.requests).toHaveLength(2);
  });

  it('falls back to the extractive summary with the status as reason when all 3 attempts get a 500', async () => {
    const { server, summarizer } = await setUp([
      { status: 500 },
      { status: 502 },
      { status: 503, body: { error: { message: 'overloaded' } } },
    ]);

    const result = await summarizer.summarize(input);
    const expected = await extractive();

    expect(server.requests).toHaveLength(3);
    expect(result.summarizer).toBe('extractive@1');
    expect(result.content).toBe(expected.content);
    expect(result.outputTokens).toBe(expected.outputTokens);
    expect(result.inputTokens).toBe(countedPrompt());
    expect(result.fallbackReason).toMatch(/^model_failed: .*HTTP 503 \(3 attempts\): overloaded$/);
  });

  it('falls back with a timeout reason when every attempt is slower than timeoutMs', async () => {
    const { server, summarizer } = await setUp([{ delayMs: 10_000 }, { delayMs: 10_000 }], {
      timeoutMs: 200,
      maxRetries: 1,
    });

    const result = await summarizer.summarize(input);

    expect(result.fallbackReason).toBe('timeout after 200 ms (2 attempts)');
    expect(result.content).toBe((await extractive()).content);
    expect(server.requests).toHaveLength(2);
  });

  it('falls back when nothing listens at the base URL', async () => {
    const closed = await startScriptedOpenAiServer({ replies: [] });
    await closed.close();
    const summarizer = new OpenAiSummarizer({
      baseUrl: closed.baseUrl,
      model: 'summary-model',
      tokenCounter,
      maxRetries: 0,
    });

    const result = await summarizer.summarize(input);

    expect(result.summarizer).toBe('extractive@1');
    expect(result.fallbackReason).toMatch(/^model_failed: cannot reach /);
  });

  it('falls back and records unauthorized when the endpoint rejects the key', async () => {
    const { summarizer } = await setUp([{ status: 401 }]);

    const result = await summarizer.summarize(input);

    expect(result.summarizer).toBe('extractive@1');
    expect(result.fallbackReason).toMatch(/^unauthorized: .*HTTP 401/);
  });

  it.each([
    ['an empty reply', { content: '' }, /^empty output$/],
    ['a whitespace reply', { content: '  \n\t ' }, /^empty output$/],
    ['a bare label', { content: 'Updated summary:' }, /^empty output$/],
    [
      'a refusal',
      { content: "I'm sorry, but I can't help with summarizing this conversation." },
      /^refusal: "I'm sorry/,
    ],
    ['a refusal with a typographic apostrophe', { content: 'I can\u2019t do that.' }, /^refusal: /],
    [
      'an echo of the instructions',
      { content: buildSummarizePrompt(input)[0]!.content! },
      /^output echoes the prompt: "Update the long-term memory/,
    ],
    [
      'an echo of the transcript',
      { content: `Existing summary:\n${previousSummary}\n\nNew messages:\n...` },
      /^output echoes the prompt: /,
    ],
    ['binary noise', { content: '\u0000\u0001\u0002\ufffd\ufffd' }, /^output is not text: /],
    ['punctuation only', { content: '... ??? !!!' }, /^output is not text: /],
    [
      'a reply cut off at max_tokens',
      { content: 'Ana runs node !a3f9c2d1 and the relay moved to', finishReason: 'length' },
      /^output cut off at max_tokens 60$/,
    ],
    ['a body that is not JSON', { raw: '<html>502 Bad Gateway</html>' }, /^model_failed: .*not JSON/],
    ['a JSON body that is not a completion', { raw: '{"hello":"world"}' }, /^model_failed: .*no choice/],
    [
      'content that is not a string',
      {
        status: 200,
        body: { choices: [{ index: 0, message: { role: 'assistant', content: [1, 2] }, finish_reason: 'stop' }] },
      },
      /^output is not text$/,
    ],
  ] satisfies [string, ScriptedReply, RegExp][])(
    'falls back to the extractive summary when the model sends %s',
    async (_name, reply, reason) => {
      const { summarizer } = await setUp([reply]);

      const result = await summarizer.summarize(input);

      expect(result.fallbackReason).toMatch(reason);
      expect(result.summarizer).toBe('extractive@1');
      expect(result.content).toBe((await extractive()).content);
    },
  );

  it('falls back naming both counts when the reply is over maxSummaryTokens', async () => {
    const overlong = Array.from(
      { length: 30 },
      (_, index) => `Fact ${index}: node !a3f9c2d1 relayed ${index * 7} packets.`,
    ).join(' ');
    const { summarizer } = await setUp([{ content: overlong, usage: { promptTokens: 300, completionTokens: 400 } }]);

    const result = await summarizer.summarize(input);

    expect(result.fallbackReason).toBe(`overlong output: ${tokenCounter.countText(overlong)} > 60 tokens`);
    expect(result.summarizer).toBe('extractive@1');
    // The failed call's billed prompt; the fallback's hypothetical prompt (the same one) is not added.
    expect(result.inputTokens).toBe(300);
    expect(tokenCounter.countText(result.content)).toBeLessThanOrEqual(60);
  });

  it('uses the configured fallback and chains its own fallback reason', async () => {
    const calls: SummarizeInput[] = [];
    const fallback: Summarizer = {
      id: 'backup-model',
      async summarize(received) {
        calls.push(received);
        return {
          content: 'backup text',
          summarizer: 'backup-model',
          inputTokens: 5,
          outputTokens: 2,
          fallbackReason: 'backup was cold',
        };
      },
    };
    const { summarizer } = await setUp([{ content: '' }], { fallback });

    const result = await summarizer.summarize(input);

    expect(calls).toEqual([input]);
    expect(result).toEqual({
      content: 'backup text',
      summarizer: 'backup-model',
      inputTokens: countedPrompt(),
      outputTokens: 2,
      fallbackReason: 'empty output; then backup was cold',
    });
  });

  it('throws instead of falling back when the caller aborts', async () => {
    const calls: SummarizeInput[] = [];
    const fallback: Summarizer = {
      id: 'spy',
      summarize: async (received) => (calls.push(received), extractive(received)),
    };
    const { summarizer } = await setUp([{ delayMs: 10_000 }], { fallback });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);

    const error = await summarizer.summarize({ ...input, signal: controller.signal }).then(
      () => undefined,
      (caught: unknown) => caught,
    );

    expect(isMemoryError(error, 'model_failed')).toBe(true);
    expect(isMemoryError(error) && error.details).toMatchObject({ aborted: true });
    expect(calls).toEqual([]);
  });

  it('sends the configured temperature and names itself after the model', async () => {
    const { server, summarizer } = await setUp([{ content: goodSummary }], { temperature: 0.3, model: 'llama3.2:3b' });

    await summarizer.summarize(input);

    expect(summarizer.id).toBe('openai:llama3.2:3b');
    expect(server.requests[0]!.body).toMatchObject({ model: 'llama3.2:3b', temperature: 0.3 });
  });

  it('throws invalid_input when an option is unusable', () => {
    const base = { baseUrl: 'http://127.0.0.1:1/v1', model: 'm', tokenCounter };
    expect(() => new OpenAiSummarizer({ ...base, temperature: 3 })).toThrow(/temperature must be a number from 0 to 2/);
    expect(() => new OpenAiSummarizer({ ...base, baseUrl: 'localhost:11434' })).toThrow(
      /baseUrl must be an http\(s\) URL/,
    );
    expect(() => new OpenAiSummarizer({ ...base, maxRetries: -1 })).toThrow(/maxRetries/);
  });
});
