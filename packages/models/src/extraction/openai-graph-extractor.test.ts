import { isMemoryError, MemoryError } from '@mnemo/core';
import { afterEach, describe, expect, it } from 'vitest';
import { fixtureGraphReply, fixtureKnownEntities, fixtureMessages } from './extraction.fixture.js';
import { buildGraphExtractionPrompt } from './graph-extraction-prompt.js';
import { graphExtractionSchema } from './graph-extraction-schema.js';
import { OpenAiGraphExtractor } from './openai-graph-extractor.js';
import type { InvalidOutputEvent } from './request-validated-json.js';
import type { OpenAiExtractorOptions } from './resolve-extractor-options.js';
import {
  startScriptedOpenAiServer,
  type ScriptedOpenAiServer,
  type ScriptedReply,
} from '../testing/scripted-openai-server.js';

const input = { messages: fixtureMessages, knownEntities: fixtureKnownEntities };
const goodReply = JSON.stringify(fixtureGraphReply);
const expectedEntities = [
  { name: 'Ana', type: 'person', aliases: [], description: "the user's sister" },
  { name: 'Hood River', type: 'place', aliases: [] },
  { name: 'Hood River trip', type: 'event', aliases: ['the trip'], description: 'moved to 21 June' },
];

let server: ScriptedOpenAiServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setUp(replies: readonly ScriptedReply[], options: Partial<OpenAiExtractorOptions> = {}) {
  server = await startScriptedOpenAiServer({ replies });
  const invalid: InvalidOutputEvent[] = [];
  const extractor = new OpenAiGraphExtractor({
    baseUrl: server.baseUrl,
    model: 'graph-model',
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

type ChatBody = { messages: { role: string; content: string }[]; response_format?: unknown };

describe('OpenAiGraphExtractor', () => {
  it('returns the entities and relations of a good reply, having sent the prompt with the strict JSON schema', async () => {
    const { server, extractor, invalid } = await setUp([{ content: goodReply }]);

    const graph = await extractor.extract(input);

    expect(extractor.id).toBe('openai:graph-model');
    expect(graph).toEqual({ entities: expectedEntities, relations: fixtureGraphReply.relations });
    expect(invalid).toEqual([]);
    const body = server.requests[0]!.body as ChatBody;
    expect(body.messages).toEqual(buildGraphExtractionPrompt(input));
    expect(body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'extracted_graph', schema: graphExtractionSchema, strict: true },
    });
  });

  it('accepts a reply fenced as ```json', async () => {
    const { extractor } = await setUp([{ content: `\`\`\`json\n${goodReply}\n\`\`\`` }]);

    expect((await extractor.extract(input)).relations).toEqual(fixtureGraphReply.relations);
  });

  it('asks again with the problems fed back when a relation names an entity nobody listed, and returns the corrected graph', async () => {
    const dangling = JSON.stringify({
      ...fixtureGraphReply,
      relations: [{ subject: 'user', predicate: 'lives_in', object: 'Oslo', sourceSeqs: [11] }],
    });
    const { server, extractor, invalid } = await setUp([{ content: dangling }, { content: goodReply }]);

    const graph = await extractor.extract(input);

    expect(graph.relations).toEqual(fixtureGraphReply.relations);
    expect(invalid).toMatchObject([
      {
        attempt: 1,
        willRetry: true,
        problems: ['relations[0].object "Oslo" is not "user", an entity of this reply or a known entity'],
      },
    ]);
    const retry = (server.requests[1]!.body as ChatBody).messages;
    expect(retry[2]).toEqual({ role: 'assistant', content: dangling });
    expect(retry[3]!.content).toContain('"Oslo" is not "user"');
  });

  it('throws model_failed with the problems after the last malformed reply', async () => {
    const { server, extractor, invalid } = await setUp([{ content: 'Ana is her sister.' }, { content: '[]' }], {
      maxInvalidRetries: 1,
    });

    const error = await failure(extractor.extract(input));

    expect(error).toMatchObject({ code: 'model_failed', details: { attempts: 2, output: '[]' } });
    expect(error.details?.problems).toEqual(['the reply must be a JSON object with "entities" and "relations" lists']);
    expect(invalid.map((event) => event.willRetry)).toEqual([true, false]);
    expect(server.requests).toHaveLength(2);
  });

  it('throws model_failed after the SDK retries when the endpoint answers 500', async () => {
    const { server, extractor, invalid } = await setUp([{ status: 500 }, { status: 500 }], { maxRetries: 1 });

    const error = await failure(extractor.extract(input));

    expect(error).toMatchObject({ code: 'model_failed', details: { status: 500 } });
    expect(server.requests).toHaveLength(2);
    expect(invalid).toEqual([]);
  });

  it('sends nothing and returns an empty graph for no messages', async () => {
    const { server, extractor } = await setUp([]);

    expect(await extractor.extract({ messages: [], knownEntities: [] })).toEqual({ entities: [], relations: [] });
    expect(server.requests).toHaveLength(0);
  });
});
