import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startScriptedOpenAiServer, type ScriptedOpenAiServer } from '@mnemo/models/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeWorkDirectory, readStoredMessages, runMnemo } from './run-mnemo.js';

let work: { path: string; remove: () => Promise<void> };
let server: ScriptedOpenAiServer | undefined;

beforeEach(async () => {
  work = await makeWorkDirectory();
});

afterEach(async () => {
  await server?.close();
  server = undefined;
  await work.remove();
});

function endpoint(target: ScriptedOpenAiServer): Record<string, string> {
  return { MNEMO_LLM_BASE_URL: target.baseUrl, MNEMO_LLM_MODEL: 'mesh-model' };
}

describe('mnemo chat', () => {
  it('answers each piped line, stores all four turns in order and sends the built context', async () => {
    server = await startScriptedOpenAiServer({
      replies: [{ content: 'Hi Maren, loud and clear.' }, { content: 'Node 7 last heard 2 min ago.' }],
    });

    const run = await runMnemo(['chat', '--system', 'Reply in 150 characters or fewer.'], {
      cwd: work.path,
      env: endpoint(server),
      input: 'hello from the trailhead\nis node 7 up?\n',
    });

    expect(run.code).toBe(0);
    expect(run.stdout).toBe('Hi Maren, loud and clear.\nNode 7 last heard 2 min ago.\n');
    expect(
      run.stderr.match(/^\[context\] sent \d+ \/ full \d+ tokens, saved [\d.]+% \(hybrid, budget 2,000\)$/gm),
    ).toHaveLength(2);
    const stored = await readStoredMessages(join(work.path, 'mnemo.db'));
    expect(stored.get('chat')).toEqual([
      { role: 'user', content: 'hello from the trailhead' },
      { role: 'assistant', content: 'Hi Maren, loud and clear.' },
      { role: 'user', content: 'is node 7 up?' },
      { role: 'assistant', content: 'Node 7 last heard 2 min ago.' },
    ]);
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]!.body).toMatchObject({
      model: 'mesh-model',
      messages: [
        { role: 'system', content: 'Reply in 150 characters or fewer.' },
        { role: 'user', content: 'hello from the trailhead' },
        { role: 'assistant', content: 'Hi Maren, loud and clear.' },
        { role: 'user', content: 'is node 7 up?' },
      ],
    });
  });

  it('sends only what fits the budget once the history outgrows it', async () => {
    server = await startScriptedOpenAiServer({
      replies: [{ content: 'First answer, long enough to take some room in the budget.' }, { content: 'Second.' }],
    });

    const run = await runMnemo(['chat', '--max-tokens', '20', '--conversation', 'node-7', '--db', 'bot.db'], {
      cwd: work.path,
      env: endpoint(server),
      input: 'first question about the relay on the ridge\nsecond question\n',
    });

    expect(run.code).toBe(0);
    const secondRequest = server.requests[1]!.body as { messages: { content: string }[] };
    expect(secondRequest.messages.map((message) => message.content)).toEqual(['second question']);
    expect((await readStoredMessages(join(work.path, 'bot.db'))).get('node-7')).toHaveLength(4);
  });

  it('prints the model error, keeps the user turn and goes on with the next line', async () => {
    // The chat model retries twice, so three 500s fail the first line.
    server = await startScriptedOpenAiServer({
      replies: [{ status: 500 }, { status: 500 }, { status: 500 }, { content: 'Back online.' }],
    });

    const run = await runMnemo(['chat'], {
      cwd: work.path,
      env: endpoint(server),
      input: 'are you there?\nand now?\n',
    });

    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(
      /^mnemo: model mesh-model at http:\/\/127\.0\.0\.1:\d+\/v1 failed with HTTP 500 \(3 attempts\)/m,
    );
    expect(run.stdout).toBe('Back online.\n');
    expect((await readStoredMessages(join(work.path, 'mnemo.db'))).get('chat')).toEqual([
      { role: 'user', content: 'are you there?' },
      { role: 'user', content: 'and now?' },
      { role: 'assistant', content: 'Back online.' },
    ]);
  });

  it('exits 2 naming the variables to set, without a prompt or a database, when no endpoint is configured', async () => {
    const run = await runMnemo(['chat'], { cwd: work.path, input: 'hello\n' });

    expect(run.code).toBe(2);
    expect(run.stderr).toContain('MNEMO_LLM_BASE_URL');
    expect(run.stderr).toContain('MNEMO_LLM_MODEL');
    expect(run.stderr).not.toContain('    at ');
    expect(run.stdout).toBe('');
    expect(existsSync(join(work.path, 'mnemo.db'))).toBe(false);
  });

  it('exits 2 before the first turn when the system prompt alone is over the budget', async () => {
    server = await startScriptedOpenAiServer({ replies: [{ content: 'never sent' }] });

    const run = await runMnemo(
      [
        'chat',
        '--max-tokens',
        '10',
        '--system',
        'Reply in metric units, in 150 characters or fewer, never with emoji.',
      ],
      {
        cwd: work.path,
        env: endpoint(server),
        input: 'hello\n',
      },
    );

    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^mnemo: the system prompt alone needs \d+ tokens, over maxTokens 10/);
    expect(server.requests).toHaveLength(0);
    expect((await readStoredMessages(join(work.path, 'mnemo.db'))).size).toBe(0);
  });

  it('takes the endpoint from mnemo.config.json when the environment has none', async () => {
    server = await startScriptedOpenAiServer({ replies: [{ content: 'configured by file' }], apiKey: 'sk-file' });
    await writeFile(
      join(work.path, 'mnemo.config.json'),
      JSON.stringify({ llm: { baseUrl: server.baseUrl, model: 'file-model', apiKey: 'sk-file' } }),
    );

    const run = await runMnemo(['chat'], { cwd: work.path, input: 'hi\n' });

    expect(run.code).toBe(0);
    expect(run.stdout).toBe('configured by file\n');
    expect(server.requests[0]!.body).toMatchObject({ model: 'file-model' });
  });
});
