import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ErrorBody } from '../src/index.js';
import { startTestServer, type TestServer } from './test-server.js';

let server: TestServer;

/** The readiness report of `/ready`. */
interface ReadyBody {
  readonly status: string;
  readonly checks: readonly { readonly name: string; readonly ok: boolean; readonly message: string }[];
}

/** The parts of the OpenAPI document the test below reads. */
interface OpenApiDocument {
  readonly openapi: string;
  readonly paths: Readonly<Record<string, Readonly<Record<string, unknown>>>> & {
    readonly '/v1/conversations/{id}/messages': { readonly post: MessagesOperation };
    readonly '/v1/memory/add': {
      readonly post: { readonly requestBody: JsonContent<{ readonly required: readonly string[] }> };
    };
    readonly '/health': { readonly get: { readonly security: unknown } };
  };
}
type JsonContent<Schema> = { readonly content: { readonly 'application/json': { readonly schema: Schema } } };
interface MessagesOperation {
  readonly parameters: unknown;
  readonly requestBody: JsonContent<{ readonly properties: { readonly messages: { readonly type: string } } }>;
  readonly responses: {
    readonly '201': JsonContent<{
      readonly properties: { readonly messages: { readonly items: { readonly required: readonly string[] } } };
    }>;
  };
}

beforeEach(async () => {
  server = await startTestServer();
});

afterEach(async () => {
  await server.close();
});

/** Parses Prometheus text into `name{labels}` → value, checking every line is a comment or a sample. */
function parsePrometheus(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) (-?[0-9.e+-]+|\+Inf|NaN)$/.exec(line);
    if (match === null) throw new Error(`not a Prometheus sample line: ${JSON.stringify(line)}`);
    samples.set(match[1]!, Number(match[2]));
  }
  return samples;
}

describe('/health', () => {
  it('answers 200 while the store answers and 503 with a typed error once it fails', async () => {
    const healthy = await server.json('/health');
    expect(healthy.status).toBe(200);
    expect(healthy.body).toMatchObject({ status: 'ok' });

    await server.store.close();
    const failing = await server.json('/health');
    expect(failing.status).toBe(503);
    expect(failing.body).toMatchObject({ status: 'unavailable', error: { code: 'unavailable' } });
    expect(failing.headers.get('retry-after')).toBe('1');
    // Every store 503 of the API carries Retry-After too.
    const append = await server.json('/v1/conversations/c/messages', {
      json: { messages: [{ role: 'user', content: 'after close' }] },
    });
    expect(append.status).toBe(503);
    expect(append.headers.get('retry-after')).toBe('1');
  });
});

describe('/ready', () => {
  it('answers 200 with its checks while the store reads and writes, and 503 with Retry-After once it cannot', async () => {
    const ready = await server.json<ReadyBody>('/ready');
    expect(ready.status).toBe(200);
    expect(ready.body.status).toBe('ready');
    expect(ready.body.checks.map((check) => check.name)).toEqual(['read', 'write', 'disk', 'integrity']);

    await server.store.close();
    const failing = await server.json<ReadyBody>('/ready');
    expect(failing.status).toBe(503);
    expect(failing.headers.get('retry-after')).toBe('1');
    expect(failing.body).toMatchObject({ status: 'not_ready', checks: [{ name: 'read', ok: false }] });
    expect(failing.body.checks[0]!.message).toMatch(/closed/);
  });
});

describe('/metrics', () => {
  it('counts requests by route template and status, context tokens by policy, and jobs by status', async () => {
    for (const id of ['a', 'b']) {
      await server.json(`/v1/conversations/${id}/messages`, {
        json: {
          messages: Array.from({ length: 12 }, (_, index) => ({
            role: index % 2 === 0 ? 'user' : 'assistant',
            content: `message ${index} about relay ${id} and its ${index * 7} dB margin`,
          })),
        },
      });
    }
    const first = await server.json<{ report: { sentTokens: number } }>('/v1/conversations/a/context', {
      json: { policy: 'token-window', maxTokens: 60 },
    });
    const second = await server.json<{ total_tokens: number }>('/v1/memory/context', {
      json: { conversation_id: 'b', max_tokens: 60, memory_type: 'token_buffer' },
    });
    await server.json('/v1/conversations/missing');

    const response = await server.request('/metrics');
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const samples = parsePrometheus(await response.text());
    expect(
      samples.get('mnemo_http_requests_total{method="POST",route="/v1/conversations/:id/messages",status="201"}'),
    ).toBe(2);
    expect(samples.get('mnemo_http_requests_total{method="GET",route="/v1/conversations/:id",status="404"}')).toBe(1);
    expect(
      samples.get('mnemo_http_request_duration_seconds_count{method="POST",route="/v1/conversations/:id/context"}'),
    ).toBe(1);
    expect(
      samples.get(
        'mnemo_http_request_duration_seconds_bucket{method="POST",route="/v1/conversations/:id/context",le="+Inf"}',
      ),
    ).toBe(1);
    expect(samples.get('mnemo_context_builds_total{policy="token-window"}')).toBe(2);
    const sent = first.body.report.sentTokens + second.body.total_tokens;
    expect(samples.get('mnemo_context_sent_tokens_total{policy="token-window"}')).toBe(sent);
    const full = samples.get('mnemo_context_full_history_tokens_total{policy="token-window"}')!;
    expect(full).toBeGreaterThan(sent);
    expect(samples.get('mnemo_context_saved_tokens_total{policy="token-window"}')).toBe(full - sent);
    // Each conversation passed the compaction trigger of the test server and queued a compaction job,
    // and each append queued the knowledge-extraction job of its conversation.
    expect(samples.get('mnemo_jobs{status="pending"}')).toBe(4);
    expect(samples.get('mnemo_job_backlog{kind="compact",state="pending"}')).toBe(2);
    expect(samples.get('mnemo_job_backlog{kind="extract",state="pending"}')).toBe(2);
    expect(samples.get('mnemo_job_backlog{kind="embed",state="running"}')).toBe(0);
    expect(samples.get('mnemo_job_oldest_pending_age_seconds')).toBeGreaterThanOrEqual(0);
    await server.memory.runPendingJobs();
    const after = parsePrometheus(await (await server.request('/metrics')).text());
    expect(after.get('mnemo_jobs{status="pending"}')).toBe(0);
    expect(after.get('mnemo_jobs{status="done"}')).toBe(4);
    expect(after.get('mnemo_job_backlog{kind="compact",state="pending"}')).toBe(0);
    expect(after.get('mnemo_job_oldest_pending_age_seconds')).toBe(0);
  });
});

describe('/openapi.json', () => {
  it('is an OpenAPI 3.1 document listing every route with its parameters and bodies', async () => {
    const { status, body } = await server.json<OpenApiDocument>('/openapi.json');
    expect(status).toBe(200);
    expect(body.openapi).toBe('3.1.0');
    const operations = Object.entries(body.paths as Record<string, Record<string, unknown>>).flatMap(
      ([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations.sort()).toEqual(
      [
        'GET /health',
        'GET /ready',
        'GET /metrics',
        'GET /openapi.json',
        'POST /v1/memory/add',
        'POST /v1/memory/context',
        'DELETE /v1/memory/{conversation_id}',
        'GET /v1/memory/{conversation_id}/stats',
        'GET /v1/conversations',
        'GET /v1/conversations/{id}',
        'DELETE /v1/conversations/{id}',
        'GET /v1/conversations/{id}/messages',
        'POST /v1/conversations/{id}/messages',
        'POST /v1/conversations/{id}/context',
        'POST /v1/conversations/{id}/compact',
        'GET /v1/conversations/{id}/summaries',
        'GET /v1/summaries/{id}/expand',
        'DELETE /v1/users/{userId}',
        'DELETE /v1/conversations/{id}/messages/{seq}',
        'POST /v1/conversations/{id}/erase',
        'POST /v1/users/{userId}/erase',
        'GET /v1/users/{userId}/erasures',
        'GET /v1/usage',
        'GET /v1/export',
        'POST /v1/import',
        'GET /v1/facts',
        'POST /v1/facts',
        'DELETE /v1/facts/{id}',
        'PATCH /v1/facts/{id}',
        'GET /v1/recall',
        'GET /v1/entities',
        'GET /v1/entities/{entity}/neighbours',
      ].sort(),
    );
    const append = body.paths['/v1/conversations/{id}/messages'].post;
    expect(append.parameters).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'id', in: 'path', required: true }),
        expect.objectContaining({ name: 'Idempotency-Key', in: 'header' }),
      ]),
    );
    expect(append.requestBody.content['application/json'].schema.properties.messages.type).toBe('array');
    expect(append.responses['201'].content['application/json'].schema.properties.messages.items.required).toContain(
      'seq',
    );
    expect(body.paths['/v1/memory/add'].post.requestBody.content['application/json'].schema.required).toEqual([
      'conversation_id',
      'role',
      'content',
    ]);
    expect(body.paths['/health'].get.security).toEqual([]);
  });
});

describe('request handling', () => {
  it('echoes a sane request id (and makes one up otherwise) and logs one JSON line per request with it', async () => {
    const given = await server.request('/v1/conversations', { headers: { 'X-Request-Id': 'bot-turn-42' } });
    const madeUp = await server.request('/v1/conversations', { headers: { 'X-Request-Id': 'bad id with spaces' } });

    expect(given.headers.get('x-request-id')).toBe('bot-turn-42');
    expect(madeUp.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(server.logs).toContainEqual(
      expect.objectContaining({
        reqId: 'bot-turn-42',
        msg: 'request',
        method: 'GET',
        route: '/v1/conversations',
        status: 200,
        tenantId: 'default',
      }),
    );
  });

  it('answers an unknown route with a typed 404 and counts it as unmatched', async () => {
    const response = await server.json<ErrorBody>('/v1/nothing-here');
    expect(response.status).toBe(404);
    expect(response.body.error).toEqual({ code: 'not_found', message: 'no route for GET /v1/nothing-here' });
    const samples = parsePrometheus(await (await server.request('/metrics')).text());
    expect(samples.get('mnemo_http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(1);
  });
});
