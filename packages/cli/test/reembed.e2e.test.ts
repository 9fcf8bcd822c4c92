import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HashedEmbedder } from '@mnemo/core';
import { createSqliteStore } from '@mnemo/sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runMnemo } from './run-mnemo.js';

let directory: string;

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'mnemo-reembed-'));
});

afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe('mnemo reembed', () => {
  it('replaces vectors of another model with the configured one and embeds every message', async () => {
    const transcript = Array.from({ length: 6 }, (_, index) => JSON.stringify({ role: index % 2 === 0 ? 'user' : 'assistant', content: `relay report ${index}` }));
    await writeFile(join(directory, 'chat.jsonl'), `${transcript.join('\n')}\n`);
    const replay = await runMnemo(['replay', 'chat.jsonl', '--db', 'mnemo.db', '--policy', 'token-window', '--json'], { cwd: directory });
    expect(replay.code).toBe(0);
    // Vectors of an older model, as a store that switched embedders would hold.
    const store = createSqliteStore({ path: join(directory, 'mnemo.db') });
    const [conversation] = (await store.listConversations({ tenantId: 'default' })).items;
    const scope = { tenantId: 'default', userId: conversation!.userId, conversationId: conversation!.conversationId };
    const old = new HashedEmbedder({ dimensions: 32 });
    const messages = await store.listUnembeddedMessages(scope, old.model, 100);
    const vectors = await old.embed(messages.map((message) => message.content));
    await store.upsertEmbeddings(scope, old.model, messages.map((message, index) => ({ seq: message.seq, vector: vectors[index]! })));
    await store.close();

    const run = await runMnemo(['reembed', '--db', 'mnemo.db', '--json'], { cwd: directory, timeoutMs: 60_000 });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ model: 'use-lite-512@0.2.0', droppedVectors: 6, conversations: 1, embeddedMessages: 6 });
    const after = createSqliteStore({ path: join(directory, 'mnemo.db'), readonly: true });
    expect(await after.listUnembeddedMessages(scope, 'use-lite-512@0.2.0', 100)).toEqual([]);
    expect(await after.listUnembeddedMessages(scope, old.model, 100)).toHaveLength(6);
    await after.close();
  });

  it('refuses without an embedder or a database', async () => {
    expect((await runMnemo(['reembed', '--db', 'missing.db'], { cwd: directory })).code).toBe(2);
    const none = await runMnemo(['reembed', '--db', 'missing.db'], { cwd: directory, env: { MNEMO_EMBEDDER: 'none' } });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('needs an embedder');
  });
});
