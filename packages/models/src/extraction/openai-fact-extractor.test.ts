import { isMemoryError, MemoryError } from '@mnemo/core';
import { afterEach, describe, expect, it } from 'vitest';
import { fixtureFactsReply, fixtureKnownFacts, fixtureMessages } from './extraction.fixture.js';
import { buildFactExtractionPrompt } from './fact-extraction-prompt.js';
import { factExtractionSchema } from './fact-extraction-schema.js';
import { OpenAiFactExtractor } from './openai-fact-extractor.js';
import type { InvalidOutputEvent } from './request-validated-json.js';
import type { OpenAiExtractorOptions } from './resolve-extractor-options.js';
import {
  startScriptedOpenAiServer,
  type ScriptedOpenAiServer,
  type ScriptedOpenAiServerOptions,
  type ScriptedReply,
} from '../testing/scripted-openai-server.js';

const input = { messages: fixtureMessages, knownFacts: fixtureKnownFacts };
const goodReply = JSON.stringify(fixtureFactsReply);

let server: ScriptedOpenAiServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setUp(
  replies: readonly ScriptedReply[],
  options: Partial<OpenAiExtractorOptions> = {},
  serverOptions: Partial<ScriptedOpenAiServerOptions> = {},
) {
  server = await startScriptedOpenAiServer({ replies, ...serverOptions });
  const invalid: InvalidOutputEvent[] = [];
  const extractor = new OpenAiFactExtractor({
    baseUrl: server.baseUrl,
    model: 'facts-model',
    timeoutMs: 5_000,
    onInvalidOutput: (event) => invalid.push(event),
    ...options,
  });
  return { server, extractor, invalid };
}

async function failure(promise: Promise<unknown>): Promise<MemoryError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!isMemoryError(error)) throw new Error(`expected a MemoryError, got ${String(error)}`);
  return error;
}

interface ChatBody {
  messages: { role: string; content: string }[];
  response_format?: { type: string; json_schema?: { name: string; schema: unknown; strict: boolean } };
  temperature?: number;
  max_tokens?: number;
}

function body(target: ScriptedOpenAiServer, index: number): ChatBody {
  return target.requests[index]!.body as ChatBody;
}

describe('OpenAiFactExtractor', () => {
  it('returns the facts of a good reply, having sent the prompt with the strict JSON schema', async () => {
    const { server, extractor, invalid } = await setUp([{ content: goodReply }]);

    const facts = await extractor.extract(input);

    expect(extractor.id).toBe('openai:facts-model');
    expect(facts).toEqual(fixtureFactsReply.facts);
    expect(invalid).toEqual([]);
    expect(server.requests).toHaveLength(1);
    expect(body(server, 0).messages).toEqual(buildFactExtractionPrompt(input));
    expect(body(server, 0)).toMatchObject({ temperature: 0, max_tokens: 2000 });
    expect(body(server, 0).response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'extracted_facts', schema: factExtractionSchema, strict: true },
    });
  });

  it('accepts a reply fenced as ```json', async () => {
    const { extractor, invalid } = await setUp([{ content: `Here are the facts:\n\`\`\`json\n${goodReply}\n\`\`\`` }]);

    expect(await extractor.extract(input)).toEqual(fixtureFactsReply.facts);
    expect(invalid).toEqual([]);
  });

  it('asks again with the problem fed back when a reply is not JSON, and returns the corrected facts', async () => {
    const { server, extractor, invalid } = await setUp([
      { content: 'The user is Maren and likes the 21st.' },
      { content: goodReply },
    ]);

    const facts = await extractor.extract(input);

    expect(facts).toEqual(fixtureFactsReply.facts);
    expect(invalid).toHaveLength(1);
    expect(invalid[0]).toMatchObject({
      extractor: 'openai:facts-model',
      attempt: 1,
      maxAttempts: 3,
      output: 'The user is Maren and likes the 21st.',
      willRetry: true,
    });
    expect(invalid[0]!.problems[0]).toMatch(/^the reply is not JSON/);
    const retry = body(server, 1).messages;
    expect(retry.slice(0, 2)).toEqual(buildFactExtractionPrompt(input));
    expect(retry[2]).toEqual({ role: 'assistant', content: 'The user is Maren and likes the 21st.' });
    expect(retry[3]!.role).toBe('user');
    expect(retry[3]!.content).toContain('the reply is not JSON');
    expect(retry[3]!.content).toContain('Answer again with only the corrected JSON object');
  });

  it('asks again when a fact cites a seq that was not shown, naming the seq', async () => {
    const unknownSeq = JSON.stringify({ facts: [{ ...fixtureFactsReply.facts[0], sourceSeqs: [7] }] });
    const { server, extractor, invalid } = await setUp([{ content: unknownSeq }, { content: goodReply }]);

    expect(await extractor.extract(input)).toEqual(fixtureFactsReply.facts);
    expect(invalid[0]!.problems).toEqual(['facts[0].sourceSeqs has 7, not among the seqs shown (11, 12, 13, 14)']);
    expect(body(server, 1).messages[3]!.content).toContain('facts[0].sourceSeqs has 7');
  });

  it('asks again after an empty reply', async () => {
    const { extractor, invalid } = await setUp([{ content: '   ' }, { content: goodReply }]);

    expect(await extractor.extract(input)).toEqual(fixtureFactsReply.facts);
    expect(invalid[0]!.problems).toEqual(['the reply is empty']);
  });

  it('throws model_failed with the problems and the last output when every reply is malformed', async () => {
    const wrongShape = JSON.stringify({ facts: [{ subject: 'user', attribute: 'likes' }] });
    const { server, extractor, invalid } = await setUp(
      [{ content: 'no' }, { content: '{"facts": 3}' }, { content: wrongShape }],
      {
        maxInvalidRetries: 2,
      },
    );

    const error = await failure(extractor.extract(input));

    expect(error.code).toBe('model_failed');
    expect(error.message).toMatch(
      /^openai:facts-model gave no valid output in 3 attempts: facts\[0\]\.value must be a non-empty string/,
    );
    expect(error.details).toMatchObject({ attempts: 3, output: wrongShape });
    expect(error.details?.problems).toContain('facts[0].confidence must be a number from 0 to 1 (got nothing)');
    expect(invalid.map((event) => [event.attempt, event.willRetry])).toEqual([
      [1, true],
      [2, true],
      [3, false],
    ]);
    expect(server.requests).toHaveLength(3);
  });

  it('throws model_failed after the SDK retries when the endpoint answers 500, without treating it as bad output', async () => {
    const { server, extractor, invalid } = await setUp([{ status: 500 }, { status: 500 }, { status: 500 }], {
      maxRetries: 2,
    });

    const error = await failure(extractor.extract(input));

    expect(error).toMatchObject({ code: 'model_failed', details: { status: 500 } });
    expect(error.message).toContain('3 attempts');
    expect(server.requests).toHaveLength(3);
    expect(invalid).toEqual([]);
  });

  it('throws unauthorized when the endpoint rejects the key', async () => {
    const { extractor } = await setUp([{ content: goodReply }], { apiKey: 'sk-wrong' }, { apiKey: 'sk-right' });

    expect(await failure(extractor.extract(input))).toMatchObject({ code: 'unauthorized' });
  });

  it('sends the request again without response_format when the server refuses it, and leaves it out afterwards', async () => {
    const { server, extractor } = await setUp([{ status: 400 }, { content: goodReply }, { content: goodReply }]);

    await extractor.extract(input);
    await extractor.extract(input);

    expect(server.requests).toHaveLength(3);
    expect(body(server, 0).response_format?.type).toBe('json_schema');
    expect(body(server, 1).response_format).toBeUndefined();
    expect(body(server, 2).response_format).toBeUndefined();
  });

  it('asks for a JSON object, or for nothing but the prompt, when configured so', async () => {
    const { server } = await setUp([{ content: goodReply }, { content: goodReply }]);
    const jsonObject = new OpenAiFactExtractor({
      baseUrl: server.baseUrl,
      model: 'm',
      structuredOutput: 'json_object',
    });
    const promptOnly = new OpenAiFactExtractor({ baseUrl: server.baseUrl, model: 'm', structuredOutput: 'none' });

    await jsonObject.extract(input);
    await promptOnly.extract(input);

    expect(body(server, 0).response_format).toEqual({ type: 'json_object' });
    expect(body(server, 1).response_format).toBeUndefined();
  });

  it('sends nothing and returns no facts for no messages', async () => {
    const { server, extractor } = await setUp([]);

    expect(await extractor.extract({ messages: [], knownFacts: fixtureKnownFacts })).toEqual([]);
    expect(server.requests).toHaveLength(0);
  });

  it('rejects options it cannot work with', () => {
    const baseUrl = 'http://127.0.0.1:1/v1';

    expect(() => new OpenAiFactExtractor({ baseUrl, model: 'm', maxInvalidRetries: -1 })).toThrow(/maxInvalidRetries/);
    expect(() => new OpenAiFactExtractor({ baseUrl, model: 'm', temperature: 3 })).toThrow(/temperature/);
    expect(() => new OpenAiFactExtractor({ baseUrl, model: 'm', structuredOutput: 'xml' as 'none' })).toThrow(
      /structuredOutput/,
    );
    expect(() => new OpenAiFactExtractor({ baseUrl, model: '' })).toThrow(/model/);
  });
});
