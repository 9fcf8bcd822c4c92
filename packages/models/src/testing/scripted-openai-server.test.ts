import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import {
  startScriptedOpenAiServer,
  type ScriptedOpenAiServer,
  type ScriptedOpenAiServerOptions,
} from './scripted-openai-server.js';

let server: ScriptedOpenAiServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(options: ScriptedOpenAiServerOptions): Promise<ScriptedOpenAiServer> {
  server = await startScriptedOpenAiServer(options);
  return server;
}

function post(target: ScriptedOpenAiServer, body: unknown, path = '/chat/completions'): Promise<Response> {
  return fetch(`${target.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

const request = { model: 'm', messages: [{ role: 'user', content: 'hello there' }] };

describe('startScriptedOpenAiServer', () => {
  it('answers chat completions in script order and records the bodies', async () => {
    const target = await start({ replies: [{ content: 'first' }, { content: 'second' }] });

    const first = (await (await post(target, request)).json()) as {
      choices: { message: { content: string } }[];
      usage: unknown;
    };
    const second = (await (await post(target, request)).json()) as { choices: { message: { content: string } }[] };

    expect(first.choices[0]!.message.content).toBe('first');
    expect(first.usage).toEqual({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
    expect(second.choices[0]!.message.content).toBe('second');
    expect(target.requests.map((received) => received.body)).toEqual([request, request]);
    expect(target.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  });

  it('answers a scripted status with an OpenAI-style error body and a retry-after-ms header', async () => {
    const target = await start({ replies: [{ status: 500 }] });

    const response = await post(target, request);

    expect(response.status).toBe(500);
    expect(response.headers.get('retry-after-ms')).toBe('0');
    expect(await response.json()).toMatchObject({ error: { message: 'scripted status 500', type: 'server_error' } });
  });

  it('sends a raw body verbatim', async () => {
    const target = await start({ replies: [{ raw: 'not json' }] });

    const response = await post(target, request);

    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.text()).toBe('not json');
  });

  it('answers 500 naming the request once the script is used up', async () => {
    const target = await start({ replies: [{ content: 'only one' }] });
    await post(target, request);

    const response = await post(target, request);

    expect(response.status).toBe(500);
    expect(response.headers.get('x-should-retry')).toBe('false');
    expect(JSON.stringify(await response.json())).toContain('no reply left for chat-completions request 2');
  });

  it('repeats the last reply for every further request with repeatLast, and records nothing with recordRequests: false', async () => {
    const target = await start({
      replies: [{ content: 'first' }, { content: 'again' }],
      repeatLast: true,
      recordRequests: false,
    });

    const contents: string[] = [];
    for (let index = 0; index < 4; index += 1) {
      const body = (await (await post(target, request)).json()) as { choices: { message: { content: string } }[] };
      contents.push(body.choices[0]!.message.content);
    }

    expect(contents).toEqual(['first', 'again', 'again', 'again']);
    expect(target.remainingReplies).toBe(1);
    expect(target.requests).toEqual([]);
  });

  it('chooses the reply from the request with replyTo, and falls back to the script when it returns undefined', async () => {
    const target = await start({
      replies: [{ content: 'from the script' }],
      replyTo: (body) => (body.model === 'routed' ? { status: 429, headers: { 'retry-after': '1' } } : undefined),
    });

    const routed = await post(target, { ...request, model: 'routed' });
    const scripted = (await (await post(target, request)).json()) as { choices: { message: { content: string } }[] };
    const routedAgain = await post(target, { ...request, model: 'routed' });

    expect([routed.status, routed.headers.get('retry-after')]).toEqual([429, '1']);
    expect(scripted.choices[0]!.message.content).toBe('from the script');
    expect(routedAgain.status).toBe(429);
    expect(target.remainingReplies).toBe(0);
  });

  it('cuts a raw reply after breakAfterBytes, having declared its whole length', async () => {
    const target = await start({ replies: [{ raw: '{"id":"chatcmpl-1","choices":[]}', breakAfterBytes: 10 }] });

    const response = await post(target, request);

    expect(response.headers.get('content-length')).toBe('32');
    await expect(response.text()).rejects.toThrow();
  });

  it('lists its models without consuming a reply', async () => {
    const target = await start({ replies: [{ content: 'kept' }], models: ['llama3.2'] });

    const listing = (await (await fetch(`${target.baseUrl}/models`)).json()) as {
      object: string;
      data: { id: string }[];
    };

    expect(listing.object).toBe('list');
    expect(listing.data.map((model) => model.id)).toEqual(['llama3.2']);
    expect(target.remainingReplies).toBe(1);
  });

  it('answers unknown routes with 404 without consuming a reply', async () => {
    const target = await start({ replies: [{ content: 'kept' }] });

    const unknown = await post(target, request, '/audio/speech');

    expect(unknown.status).toBe(404);
    expect(target.remainingReplies).toBe(1);
  });

  it('streams a reply as chat.completion.chunk events ending with [DONE], which the openai client reassembles', async () => {
    const target = await start({
      replies: [{ content: 'Rain after 14:00, 6 °C.' }, { content: 'abc', chunks: ['a', 'bc'] }],
    });
    const client = new OpenAI({ baseURL: target.baseUrl, apiKey: 'sk-test', maxRetries: 0 });

    const stream = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'hello there' }],
      stream: true,
    });
    const pieces: string[] = [];
    for await (const chunk of stream) pieces.push(chunk.choices[0]?.delta.content ?? '');
    const raw = await (await post(target, { ...request, stream: true })).text();

    expect(pieces.join('')).toBe('Rain after 14:00, 6 °C.');
    expect(pieces.filter((piece) => piece !== '')).toEqual(['Rain ', 'after ', '14:00, ', '6 ', '°C.']);
    const events = raw.split('\n\n').filter((event) => event !== '');
    expect(events.at(-1)).toBe('data: [DONE]');
    const chunks = events.slice(0, -1).map(
      (event) =>
        JSON.parse(event.replace(/^data: /, '')) as {
          object: string;
          choices: { delta: { content?: string }; finish_reason: string | null }[];
        },
    );
    expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk')).toBe(true);
    expect(chunks.map((chunk) => chunk.choices[0]!.delta.content ?? null)).toEqual(['', 'a', 'bc', null]);
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop');
  });

  it('returns tool calls whole, or streamed in pieces with a usage chunk when asked for', async () => {
    const toolCalls = [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Bergen"}' }];
    const target = await start({
      replies: [
        { content: '', toolCalls },
        { content: '', toolCalls, usage: { promptTokens: 7, completionTokens: 3 } },
      ],
    });
    const client = new OpenAI({ baseURL: target.baseUrl, apiKey: 'sk-test', maxRetries: 0 });

    const whole = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'hello there' }],
    });
    const stream = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'hello there' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let name = '';
    let args = '';
    let usage: unknown;
    let finishReason: string | null = null;
    for await (const chunk of stream) {
      const call = chunk.choices[0]?.delta.tool_calls?.[0];
      name += call?.function?.name ?? '';
      args += call?.function?.arguments ?? '';
      finishReason = chunk.choices[0]?.finish_reason ?? finishReason;
      if (chunk.usage) usage = chunk.usage;
    }

    expect(whole.choices[0]!.message).toMatchObject({
      content: null,
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Bergen"}' } },
      ],
    });
    expect(whole.choices[0]!.finish_reason).toBe('tool_calls');
    expect({ name, args, finishReason }).toEqual({
      name: 'get_weather',
      args: '{"city":"Bergen"}',
      finishReason: 'tool_calls',
    });
    expect(usage).toEqual({ prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 });
  });

  it('pauses a stream until a promise settles, and breaks a stream off mid-reply', async () => {
    let resume: () => void = () => undefined;
    const until = new Promise<void>((resolve) => (resume = resolve));
    const target = await start({
      replies: [
        { content: 'one two three', pause: { afterChunks: 1, until } },
        { content: 'one two three', breakAfterChunks: 2 },
      ],
    });

    const paused = await post(target, { ...request, stream: true });
    const reader = (paused.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    while (!text.includes('one ')) text += new TextDecoder().decode((await reader.read()).value);
    expect(text).not.toContain('two');
    resume();
    for (let part = await reader.read(); !part.done; part = await reader.read())
      text += new TextDecoder().decode(part.value);
    expect(text).toContain('"two "');
    expect(text).toContain('[DONE]');

    const broken = await post(target, { ...request, stream: true });
    const failure = await broken.text().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(Error);
  });

  it('answers embeddings with deterministic vectors of the requested length, as floats or base64, without consuming chat replies', async () => {
    const target = await start({ replies: [{ content: 'kept' }] });
    const client = new OpenAI({ baseURL: target.baseUrl, apiKey: 'sk-test', maxRetries: 0 });
    const texts = ['the relay on the ridge is down', 'the relay on the ridge is up', 'I love pizza'];

    const floats = await client.embeddings.create({ model: 'e', input: texts, encoding_format: 'float' });
    const again = await client.embeddings.create({ model: 'e', input: texts, encoding_format: 'float' });
    // Without encoding_format the SDK asks for base64 and decodes it.
    const decoded = await client.embeddings.create({ model: 'e', input: texts });
    const shortened = await client.embeddings.create({
      model: 'e',
      input: 'one',
      dimensions: 4,
      encoding_format: 'float',
    });

    const vectors = floats.data.map((item) => item.embedding);
    expect(floats.data.map((item) => item.index)).toEqual([0, 1, 2]);
    expect(vectors.every((vector) => vector.length === 16)).toBe(true);
    expect(again.data.map((item) => item.embedding)).toEqual(vectors);
    decoded.data.forEach((item, index) =>
      item.embedding.forEach((value, component) => expect(value).toBeCloseTo(vectors[index]![component]!, 5)),
    );
    expect(Math.hypot(...vectors[0]!)).toBeCloseTo(2, 5);
    const dot = (a: number[], b: number[]) => a.reduce((sum, value, component) => sum + value * b[component]!, 0);
    expect(dot(vectors[0]!, vectors[1]!)).toBeGreaterThan(dot(vectors[0]!, vectors[2]!));
    expect(shortened.data[0]!.embedding).toHaveLength(4);
    expect(floats.usage).toEqual({ prompt_tokens: 18, total_tokens: 18 });
    expect(target.remainingReplies).toBe(1);
  });

  it('answers embeddings from the embedding script in order, then deterministically, and rejects empty input with 400', async () => {
    const target = await start({
      replies: [],
      embeddingReplies: [{ vectors: [[3, 4]] }, { status: 503 }, { raw: 'not json' }],
      embeddingDimensions: 3,
    });
    const body = { model: 'e', input: ['a'], encoding_format: 'float' };

    const scripted = (await (await post(target, body, '/embeddings')).json()) as { data: { embedding: number[] }[] };
    const unavailable = await post(target, body, '/embeddings');
    const raw = await (await post(target, body, '/embeddings')).text();
    const deterministic = (await (await post(target, body, '/embeddings')).json()) as {
      data: { embedding: number[] }[];
    };
    const empty = await post(target, { ...body, input: ['a', ''] }, '/embeddings');

    expect(scripted.data[0]!.embedding).toEqual([3, 4]);
    expect(unavailable.status).toBe(503);
    expect(raw).toBe('not json');
    expect(deterministic.data[0]!.embedding).toHaveLength(3);
    expect(empty.status).toBe(400);
    expect(target.remainingEmbeddingReplies).toBe(0);
    expect(target.requests.filter((received) => received.path === '/v1/embeddings')).toHaveLength(5);
  });

  it('rejects a wrong api key with 401 when one is required', async () => {
    const target = await start({ replies: [{ content: 'kept' }], apiKey: 'sk-right' });

    const response = await fetch(`${target.baseUrl}/models`, { headers: { authorization: 'Bearer sk-wrong' } });

    expect(response.status).toBe(401);
  });

  it('closes promptly while a delayed reply is pending', async () => {
    const target = await start({ replies: [{ delayMs: 60_000 }] });
    const pending = post(target, request).catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();

    await target.close();
    server = undefined;

    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await pending).toBeInstanceOf(Error);
  });
});

describe('startScriptedOpenAiServer: POST /v1/responses', () => {
  it('answers the same script as a Responses response, and as its event stream up to response.completed', async () => {
    const target = await start({
      replies: [
        { content: 'Hi there.', usage: { promptTokens: 9, completionTokens: 3, cachedTokens: 4 } },
        { content: 'Again.' },
      ],
    });
    const client = new OpenAI({ baseURL: target.baseUrl, apiKey: 'unused', maxRetries: 0 });

    const response = await client.responses.create({ model: 'm', input: 'hello' });
    const events: string[] = [];
    for await (const event of await client.responses.create({ model: 'm', input: 'hello', stream: true }))
      events.push(event.type);

    expect(response.output_text).toBe('Hi there.');
    expect(response.usage).toMatchObject({
      input_tokens: 9,
      output_tokens: 3,
      input_tokens_details: { cached_tokens: 4 },
    });
    expect(events[0]).toBe('response.created');
    expect(events).toContain('response.output_text.delta');
    expect(events.at(-1)).toBe('response.completed');
    expect(target.requests.map((received) => received.path)).toEqual(['/v1/responses', '/v1/responses']);
  });
});
