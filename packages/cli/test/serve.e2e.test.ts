import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cliPath, makeWorkDirectory, readStoredMessages, runMnemo } from './run-mnemo.js';

let work: { path: string; remove: () => Promise<void> };
let child: ChildProcessWithoutNullStreams | undefined;

beforeEach(async () => {
  work = await makeWorkDirectory();
});

afterEach(async () => {
  if (child !== undefined && child.exitCode === null) child.kill('SIGKILL');
  child = undefined;
  await work.remove();
});

/** Starts `mnemo serve --port 0 ...args` and resolves with the URL from its first stdout line. */
async function startServe(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ url: string; exited: Promise<number | null>; output: () => string }> {
  const started = spawn(process.execPath, [cliPath, 'serve', '--port', '0', ...args], {
    cwd: work.path,
    env: { PATH: process.env.PATH ?? '', HOME: work.path, ...env },
  });
  child = started;
  let stdout = '';
  let stderr = '';
  started.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => started.once('close', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    started.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const firstLine = /^mnemo listening on (http:\/\/\S+)\n/.exec(stdout);
      if (firstLine !== null) resolve(firstLine[1]!);
    });
    void exited.then((code) => reject(new Error(`mnemo serve exited with ${code} before listening: ${stderr}`)));
  });
  return { url, exited, output: () => stdout };
}

describe('mnemo serve', () => {
  it('prints its URL first, serves /health and the seed API, and stops cleanly on SIGTERM', async () => {
    const serve = await startServe(['--db', 'served.db']);

    expect(serve.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const health = await fetch(`${serve.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok' });
    const added = await fetch(`${serve.url}/v1/memory/add`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ conversation_id: 'node-7', role: 'user', content: 'hello from the ridge' }),
    });
    expect(added.status).toBe(200);
    const context = await fetch(`${serve.url}/v1/memory/context`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ conversation_id: 'node-7', max_tokens: 100 }),
    });
    expect(((await context.json()) as { messages: unknown }).messages).toEqual([
      { role: 'user', content: 'hello from the ridge' },
    ]);
    const document = (await (await fetch(`${serve.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(['/v1/memory/add', '/v1/conversations/{id}/messages', '/v1/chat/completions']),
    );

    child?.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
    expect(serve.output()).toMatch(/"msg":"stopped"/);
    expect((await readStoredMessages(join(work.path, 'served.db'))).get('node-7')).toEqual([
      { role: 'user', content: 'hello from the ridge' },
    ]);
  });

  it('requires a key from MNEMO_API_KEYS once keys are configured', async () => {
    const serve = await startServe(['--db', 'keyed.db'], { MNEMO_API_KEYS: 'radio-key-1:mesh,ops-key-2:ops' });

    expect((await fetch(`${serve.url}/v1/conversations`)).status).toBe(401);
    const allowed = await fetch(`${serve.url}/v1/conversations`, { headers: { authorization: 'Bearer radio-key-1' } });
    expect(allowed.status).toBe(200);
    child?.kill('SIGINT');
    expect(await serve.exited).toBe(0);
  });

  it('reads keys, limits and CORS origins from the server section of mnemo.config.json', async () => {
    const config = {
      db: './from-config.db',
      server: {
        apiKeys: [{ key: 'file-key-1', tenantId: 'mesh' }],
        maxBodyBytes: 256,
        rateLimit: false,
        corsOrigins: ['https://console.example'],
      },
    };
    await writeFile(join(work.path, 'mnemo.config.json'), JSON.stringify(config));
    const serve = await startServe([]);
    const headers = { authorization: 'Bearer file-key-1', origin: 'https://console.example' };

    expect((await fetch(`${serve.url}/v1/conversations`)).status).toBe(401);
    const listed = await fetch(`${serve.url}/v1/conversations`, { headers });
    expect(listed.status).toBe(200);
    expect(listed.headers.get('access-control-allow-origin')).toBe('https://console.example');
    const oversize = await fetch(`${serve.url}/v1/conversations/c/messages`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ messages: [{ role: 'user', content: 'x'.repeat(300) }] }),
    });
    expect(oversize.status).toBe(413);
    child?.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
    expect(existsSync(join(work.path, 'from-config.db'))).toBe(true);
  });

  it('refuses a non-loopback host without API keys and exits 2', async () => {
    const run = await runMnemo(['serve', '--host', '0.0.0.0', '--port', '0', '--db', 'never.db'], { cwd: work.path });

    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^mnemo: refusing to listen on 0\.0\.0\.0 without API keys/);
    expect(run.stdout).toBe('');
    expect(existsSync(join(work.path, 'never.db'))).toBe(false);
  });

  it('rejects a malformed MNEMO_API_KEYS naming the variable, without printing the keys', async () => {
    const run = await runMnemo(['serve', '--port', '0'], {
      cwd: work.path,
      env: { MNEMO_API_KEYS: 'secret-one:tenant,secret-two' },
    });

    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/MNEMO_API_KEYS: item 2 is not key:tenant/);
    expect(run.stderr).not.toContain('secret');
  });
});
