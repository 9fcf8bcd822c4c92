import { startScriptedOpenAiServer, type ScriptedOpenAiServer, type ScriptedReply } from '@mnemo/models/testing';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { postJson, startProxyApp, type ProxyApp } from '../../../test/start-proxy-app.js';
import { responsesUpstreamMode } from './mount-responses-route.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function start(
  replies: readonly ScriptedReply[],
  responsesApi: 'forward' | 'translate' = 'translate',
): Promise<{ upstream: ScriptedOpenAiServer; app: ProxyApp; client: OpenAI }> {
  const upstream = await startScriptedOpenAiServer({ replies });
  cleanups.push(() => upstream.close());
  const app = await startProxyApp({ llm: { baseUrl: upstream.baseUrl, responsesApi } });
  cleanups.push(() => app.close());
  return { upstream, app, client: new OpenAI({ baseURL: `${app.url}/v1`, apiKey: 'sk-client', maxRetries: 0 }) };
}

const usage = { promptTokens: 40, completionTokens: 5, cachedTokens: 32 };

describe('POST /v1/responses', () => {
  it('chains with previous_response_id: the new input alone is sent, with the stored history as context', async () => {
    const { upstream, app, client } = await start([
      { content: 'Hello Ada.', usage },
      { content: 'You are Ada.', usage },
    ]);

    const first = await client.responses.create({
      model: 'm',
      instructions: 'Be brief.',
      input: 'My name is Ada.',
      user: 'ada',
    });
    const second = await client.responses.create({
      model: 'm',
      input: 'What is my name?',
      previous_response_id: first.id,
      user: 'ada',
    });

    expect(second.output_text).toBe('You are Ada.');
    expect(second.usage).toMatchObject({
      input_tokens: 40,
      output_tokens: 5,
      input_tokens_details: { cached_tokens: 32 },
    });
    const sent = (
      upstream.requests.at(-1)!.body as { messages: { role: string; content: string }[]; previous_response_id?: string }
    ).messages;
    expect(sent.map((message) => `${message.role}: ${message.content}`)).toEqual([
      'user: My name is Ada.',
      'assistant: Hello Ada.',
      'user: What is my name?',
    ]);
    expect(upstream.requests.at(-1)!.path).toBe('/v1/chat/completions');
    const stored = await app.stored('ada');
    expect(stored.map((message) => message.content)).toEqual([
      'My name is Ada.',
      'Hello Ada.',
      'What is my name?',
      'You are Ada.',
    ]);
    expect(stored[3]!.metadata).toMatchObject({
      proxy: { ids: [second.id, expect.stringMatching(/^msg_/)], usage: { inputTokens: 40, cachedInputTokens: 32 } },
    });
  });

  it('answers 404 for a previous_response_id the conversation does not hold, and stores nothing', async () => {
    const { app } = await start([{ content: 'unused' }]);

    const response = await postJson(`${app.url}/v1/responses`, {
      model: 'm',
      input: 'hi',
      previous_response_id: 'resp_elsewhere',
      user: 'bo',
    });

    expect(response.status).toBe(404);
    expect(await app.stored('bo')).toEqual([]);
  });

  it('refuses an image part and a web search tool for a chat upstream with 400, before storing anything', async () => {
    const { app, upstream } = await start([{ content: 'unused' }]);

    const image = await postJson(`${app.url}/v1/responses`, {
      model: 'm',
      user: 'cy',
      input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://x/y.png' }] }],
    });
    const search = await postJson(`${app.url}/v1/responses`, {
      model: 'm',
      user: 'cy',
      input: 'news?',
      tools: [{ type: 'web_search' }],
    });

    expect(image.status).toBe(400);
    expect(((await image.json()) as { error: { message: string } }).error.message).toMatch(/input_image/);
    expect(search.status).toBe(400);
    expect(((await search.json()) as { error: { message: string } }).error.message).toMatch(/web_search.*forward/);
    expect(await app.stored('cy')).toEqual([]);
    expect(upstream.requests).toEqual([]);
  });

  it('stores nothing for a regenerate and marks the new reply as superseding the old', async () => {
    const { app } = await start([{ content: 'First answer.' }, { content: 'Second answer.' }]);
    const body = { model: 'm', user: 'di', input: [{ role: 'user', content: 'Tell me a fact.' }] };

    await postJson(`${app.url}/v1/responses`, body);
    const again = await postJson(`${app.url}/v1/responses`, body);

    expect(again.status).toBe(200);
    const stored = await app.stored('di');
    expect(stored.map((message) => message.content)).toEqual(['Tell me a fact.', 'First answer.', 'Second answer.']);
    expect(stored[2]!.metadata).toMatchObject({ mnemo: { supersedes: [stored[1]!.id] } });
  });

  it('streams the Responses event sequence the SDKs parse when translating a chat stream, text and function call', async () => {
    const { app } = await start([
      { content: 'Checking now.', toolCalls: [{ id: 'call_9', name: 'lookup', arguments: '{"node":7}' }], usage },
    ]);

    const response = await postJson(`${app.url}/v1/responses`, {
      model: 'm',
      user: 'ed',
      input: 'node 7?',
      stream: true,
      tools: [{ type: 'function', name: 'lookup', parameters: {} }],
    });
    const events = (await response.text())
      .split('\n\n')
      .filter((block) => block.startsWith('event: '))
      .map((block) => JSON.parse(block.split('\ndata: ')[1]!) as Record<string, unknown>);

    expect(events.map((event) => event.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    const completed = events.at(-1)!.response as {
      output: { type: string; call_id?: string; arguments?: string }[];
      usage: unknown;
    };
    expect(completed.output.map((item) => item.type)).toEqual(['message', 'function_call']);
    expect(completed.output[1]).toMatchObject({ call_id: 'call_9', arguments: '{"node":7}' });
    expect(completed.usage).toMatchObject({ input_tokens: 40, input_tokens_details: { cached_tokens: 32 } });
    const stored = await app.stored('ed');
    expect(stored[1]).toMatchObject({
      role: 'assistant',
      content: 'Checking now.',
      toolCalls: [{ id: 'call_9', function: { name: 'lookup', arguments: '{"node":7}' } }],
    });
  });

  it('ends a stream the upstream breaks off with an error event the openai SDK raises, and stores the partial reply marked incomplete', async () => {
    const { app, client } = await start([{ content: 'one two three four', breakAfterChunks: 2 }]);

    const stream = client.responses.stream({ model: 'm', input: 'count', user: 'fa' });
    await expect(stream.finalResponse()).rejects.toThrow(/broke off/);

    await expect.poll(async () => (await app.stored('fa')).length).toBe(2);
    const stored = await app.stored('fa');
    expect(stored[1]).toMatchObject({ content: 'one two ', metadata: { proxy: { incomplete: true } } });
  });

  it('forwards Responses with the context as input, without previous_response_id or instructions', async () => {
    const { upstream, app, client } = await start([{ content: 'Hi Gus.' }, { content: 'Still Gus.' }], 'forward');

    const first = await client.responses.create({
      model: 'm',
      instructions: 'Be brief.',
      input: 'I am Gus.',
      user: 'gus',
    });
    // As on OpenAI, instructions are not carried over from the previous response: each request states its own.
    await client.responses.create({
      model: 'm',
      instructions: 'Be brief.',
      input: 'Who am I?',
      previous_response_id: first.id,
      user: 'gus',
      store: false,
    });

    const body = upstream.requests.at(-1)!.body as Record<string, unknown>;
    expect(upstream.requests.at(-1)!.path).toBe('/v1/responses');
    expect(body).not.toHaveProperty('previous_response_id');
    expect(body).not.toHaveProperty('instructions');
    expect(body.store).toBe(false);
    expect(body.input).toEqual([
      { type: 'message', role: 'system', content: 'Be brief.' },
      { type: 'message', role: 'user', content: 'I am Gus.' },
      { type: 'message', role: 'assistant', content: 'Hi Gus.' },
      { type: 'message', role: 'user', content: 'Who am I?' },
    ]);
    expect((await app.stored('gus')).map((message) => message.content)).toEqual([
      'I am Gus.',
      'Hi Gus.',
      'Who am I?',
      'Still Gus.',
    ]);
  });
});

describe('responsesUpstreamMode', () => {
  it('forwards to api.openai.com and translates for any other upstream unless configured', () => {
    expect(responsesUpstreamMode({ baseUrl: 'https://api.openai.com/v1' })).toBe('forward');
    expect(responsesUpstreamMode({ baseUrl: 'http://127.0.0.1:11434/v1' })).toBe('translate');
    expect(responsesUpstreamMode({ baseUrl: 'http://127.0.0.1:8000/v1', responsesApi: 'forward' })).toBe('forward');
    expect(responsesUpstreamMode({ baseUrl: 'https://api.openai.com/v1', responsesApi: 'translate' })).toBe(
      'translate',
    );
  });
});
