import { afterEach, describe, expect, it } from 'vitest';
import { startScriptedOpenAiServer, type ScriptedOpenAiServer, type ScriptedOpenAiServerOptions } from './scripted-openai-server.js';

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
  return fetch(`${target.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

const request = { model: 'm', messages: [{ role: 'user', content: 'hello there' }] };

describe('startScriptedOpenAiServer', () => {
  it('answers chat completions in script order and records the bodies', async () => {
    const target = await start({ replies: [{ content: 'first' }, { content: 'second' }] });

    const first = (await (await post(target, request)).json()) as { choices: { message: { content: string } }[]; usage: unknown };
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

  it('lists its models without consuming a reply', async () => {
    const target = await start({ replies: [{ content: 'kept' }], models: ['llama3.2'] });

    const listing = (await (await fetch(`${target.baseUrl}/models`)).json()) as { object: string; data: { id: string }[] };

    expect(listing.object).toBe('list');
    expect(listing.data.map((model) => model.id)).toEqual(['llama3.2']);
    expect(target.remainingReplies).toBe(1);
  });

  it('refuses streaming requests and unknown routes without consuming a reply', async () => {
    const target = await start({ replies: [{ content: 'kept' }] });

    const streaming = await post(target, { ...request, stream: true });
    const unknown = await post(target, request, '/embeddings');

    expect(streaming.status).toBe(400);
    expect(unknown.status).toBe(404);
    expect(target.remainingReplies).toBe(1);
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
