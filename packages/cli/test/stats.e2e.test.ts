import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createMemory, HashedEmbedder } from '@mnemo/core';
import { embedConversation } from '@mnemo/core/internals';
import { StaticEmbedder } from '@mnemo/models';
import { createSqliteStore } from '@mnemo/sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeWorkDirectory, meshTranscript, runMnemo } from './run-mnemo.js';

let work: { path: string; remove: () => Promise<void> };

beforeEach(async () => {
  work = await makeWorkDirectory();
});

afterEach(async () => {
  await work.remove();
});

interface StatsJson {
  db: string;
  conversations: {
    conversationId: string;
    messageCount: number;
    totalTokens: number;
    usage: { requests: number; sentTokens: number; fullHistoryTokens: number };
  }[];
}

describe('mnemo stats', () => {
  it('lists the conversation a replay kept, with its counts and the usage of the replayed requests', async () => {
    await writeFile(join(work.path, 'mesh.jsonl'), meshTranscript(5));
    const replay = await runMnemo(['replay', 'mesh.jsonl', '--db', 'r.db', '--json', '--max-tokens', '150'], {
      cwd: work.path,
    });
    const replayed = JSON.parse(replay.stdout) as { sentTokens: number; fullHistoryTokens: number };

    const run = await runMnemo(['stats', '--json'], { cwd: work.path, env: { MNEMO_DB: 'r.db' } });

    expect(run.code).toBe(0);
    const stats = JSON.parse(run.stdout) as StatsJson;
    expect(stats.db).toBe(join(work.path, 'r.db'));
    expect(stats.conversations).toHaveLength(1);
    const [conversation] = stats.conversations;
    expect(conversation).toMatchObject({
      messageCount: 10,
      usage: { requests: 5, sentTokens: replayed.sentTokens, fullHistoryTokens: replayed.fullHistoryTokens },
    });
    expect(conversation!.totalTokens).toBeGreaterThan(0);

    const one = await runMnemo(['stats', '--db', 'r.db', '--conversation', conversation!.conversationId, '--json'], {
      cwd: work.path,
    });
    expect(JSON.parse(one.stdout)).toMatchObject({ conversationId: conversation!.conversationId, messageCount: 10 });

    const table = await runMnemo(['stats', '--db', 'r.db'], { cwd: work.path });
    expect(table.stdout).toMatch(
      new RegExp(`^${conversation!.conversationId}\\s+${conversation!.conversationId}\\s+10\\s+`, 'm'),
    );
  });

  it('shows the requests of one policy after a replay that compared them all', async () => {
    await writeFile(join(work.path, 'mesh.jsonl'), meshTranscript(4));
    const replay = await runMnemo(['replay', 'mesh.jsonl', '--db', 'r.db'], { cwd: work.path });
    expect(replay.stdout).toMatch(/^summary\s+4\s+/m);

    const run = await runMnemo(['stats', '--db', 'r.db', '--json'], { cwd: work.path });

    const stats = JSON.parse(run.stdout) as StatsJson;
    expect(stats.conversations[0]!.usage.requests).toBe(4);
  });

  it('shows the background jobs not done yet per kind and how long the oldest has waited', async () => {
    const memory = createMemory({
      store: createSqliteStore({ path: join(work.path, 'queued.db') }),
      worker: { autoStart: false },
      compaction: false,
    });
    await memory.append({ conversationId: 'node-7' }, { role: 'user', content: 'relay LARCH-RIDGE is back online' });
    await memory.append({ conversationId: 'node-8' }, { role: 'user', content: 'node 8 reports 4 hops' });
    await memory.close();

    const json = await runMnemo(['stats', '--db', 'queued.db', '--json'], { cwd: work.path });
    const table = await runMnemo(['stats', '--db', 'queued.db'], { cwd: work.path });

    const { backlog } = JSON.parse(json.stdout) as {
      backlog: { byKind: Record<string, { pending: number; running: number }>; oldestPendingAgeMs: number };
    };
    expect(backlog.byKind).toEqual({
      compact: { pending: 0, running: 0 },
      embed: { pending: 0, running: 0 },
      extract: { pending: 2, running: 0 },
      refine: { pending: 0, running: 0 },
    });
    expect(backlog.oldestPendingAgeMs).toBeGreaterThanOrEqual(0);
    expect(table.stdout).toMatch(/^extract\s+2\s+0$/m);
    expect(table.stdout).toMatch(/^oldest pending job waited: \d+\.\d s/m);
    // No embedder was configured: no vectors, and the table says so.
    expect(JSON.parse(json.stdout)).toMatchObject({ vectors: [] });
    expect(table.stdout).toMatch(/^vectors: none stored$/m);
  });

  it("shows the tenant's stored vectors per model", async () => {
    await writeFile(join(work.path, 'mesh.jsonl'), meshTranscript(3));
    await runMnemo(['replay', 'mesh.jsonl', '--db', 'v.db', '--json'], { cwd: work.path });
    // The default embedder's vectors for every message, and one of an older model.
    const store = createSqliteStore({ path: join(work.path, 'v.db') });
    const [conversation] = (await store.listConversations({ tenantId: 'default' })).items;
    const scope = { tenantId: 'default', userId: conversation!.userId, conversationId: conversation!.conversationId };
    const embedder = new StaticEmbedder();
    expect(await embedConversation({ store, embedder }, scope)).toBe(6);
    const old = new HashedEmbedder({ dimensions: 32 });
    await store.upsertEmbeddings(scope, old.model, [{ seq: 1, vector: (await old.embed(['relay']))[0]! }]);
    await store.close();

    const json = await runMnemo(['stats', '--db', 'v.db', '--json'], { cwd: work.path });
    const table = await runMnemo(['stats', '--db', 'v.db'], { cwd: work.path });

    expect(JSON.parse(json.stdout)).toMatchObject({
      embedder: embedder.model,
      vectors: [
        { model: embedder.model, vectors: 6 },
        { model: old.model, vectors: 1 },
      ],
    });
    expect(table.stdout).toMatch(/^vectors: 6 of static-use-lite-64@\w+, 1 of hashed-\S+ \(recall searches only/m);
  });

  it('exits 2 for an unknown conversation', async () => {
    await writeFile(join(work.path, 'mesh.jsonl'), meshTranscript(1));
    await runMnemo(['replay', 'mesh.jsonl', '--db', 'r.db', '--json'], { cwd: work.path });

    const run = await runMnemo(['stats', '--db', 'r.db', '--conversation', 'nope'], { cwd: work.path });

    expect(run.code).toBe(2);
    expect(run.stderr).toContain('conversation "nope" has no messages');
  });

  it('exits 2 without creating a file when the database does not exist', async () => {
    const run = await runMnemo(['stats'], { cwd: work.path });

    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^mnemo: .*mnemo\.db.*does not exist/);
    expect(existsSync(join(work.path, 'mnemo.db'))).toBe(false);
  });
});
