import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, expect, it } from 'vitest';
import { describeWithPostgres, dropSchemas, freshSchemaUrl } from './postgres-database.js';
import { makeWorkDirectory, meshTranscript, runMnemo } from './run-mnemo.js';

let work: { path: string; remove: () => Promise<void> };

beforeEach(async () => {
  work = await makeWorkDirectory();
});

afterEach(async () => {
  await work.remove();
});

// Each test spawns the CLI several times; on a loaded machine that outlasts the default 30 s.
const spawnHeavy = { timeout: 120_000 };

describeWithPostgres('mnemo commands on a PostgreSQL store (--db postgres://…)', (url) => {
  const schemas: string[] = [];
  afterAll(() => dropSchemas(url, schemas));
  const fresh = () => {
    const made = freshSchemaUrl(url);
    schemas.push(made.schema);
    return made;
  };
  const run = async (args: readonly string[], env: Record<string, string> = {}) =>
    runMnemo(args, { cwd: work.path, env, timeoutMs: 60_000 });

  it('migrates a schema and prints its version, without the password', async () => {
    const store = fresh();
    const first = await run(['migrate', '--db', store.url, '--json']);
    expect(first.code).toBe(0);
    const report = JSON.parse(first.stdout) as {
      store: string;
      db: string;
      schema: string;
      fromVersion: number;
      toVersion: number;
      applied: number[];
    };
    expect(report).toMatchObject({ store: 'postgres', schema: store.schema, fromVersion: 0 });
    expect(report.applied).toEqual(Array.from({ length: report.toVersion }, (_, index) => index + 1));
    expect(first.stdout).not.toContain(':mnemo@');
    const again = await run(['migrate'], { MNEMO_DATABASE_URL: store.url });
    expect(again.stdout).toMatch(new RegExp(`schema version ${report.toVersion}, up to date`));
  });

  it(
    'replays into the store, then reads, compacts, expands and re-embeds it, with --db or MNEMO_DATABASE_URL',
    spawnHeavy,
    async () => {
      const store = fresh();
      await writeFile(join(work.path, 'mesh.jsonl'), meshTranscript(30));
      const replay = await run([
        'replay',
        'mesh.jsonl',
        '--db',
        store.url,
        '--policy',
        'summary',
        '--max-tokens',
        '300',
        '--json',
      ]);
      expect(replay.code).toBe(0);
      expect(replay.stderr).toMatch(/stored 60 messages in postgres:\/\/.*:\*\*\*@/);

      const stats = await run(['stats', '--json'], { MNEMO_DATABASE_URL: store.url, MNEMO_DB: 'ignored.db' });
      expect(stats.code).toBe(0);
      const listed = JSON.parse(stats.stdout) as {
        db: string;
        conversations: { conversationId: string; messageCount: number }[];
      };
      expect(listed.db).not.toContain('mnemo:mnemo@');
      expect(listed.conversations).toHaveLength(1);
      const [conversation] = listed.conversations;
      expect(conversation?.messageCount).toBe(60);

      const compact = await run([
        'compact',
        conversation!.conversationId,
        '--db',
        store.url,
        '--max-tokens',
        '300',
        '--json',
      ]);
      expect(compact.code).toBe(0);
      const summaries = JSON.parse(
        (await run(['summaries', conversation!.conversationId, '--db', store.url, '--json'])).stdout,
      ) as {
        watermark: number;
        summaries: { id: string; toSeq: number }[];
      };
      expect(summaries.summaries.length).toBeGreaterThan(0);
      const latest = summaries.summaries[summaries.summaries.length - 1]!;
      expect(latest.toSeq).toBe(summaries.watermark);
      const expanded = JSON.parse(
        (await run(['expand', latest.id, '--db', store.url, '--conversation', conversation!.conversationId, '--json']))
          .stdout,
      ) as { messages: { seq: number }[] };
      expect(expanded.messages.map((message) => message.seq)).toEqual(
        Array.from({ length: latest.toSeq }, (_, index) => index + 1),
      );

      const reembed = await run(['reembed', '--db', store.url, '--json'], { MNEMO_EMBEDDER: 'hashed' });
      expect(reembed.code).toBe(0);
      expect(JSON.parse(reembed.stdout)).toMatchObject({
        model: 'hashed-bow-256',
        droppedVectors: 0,
        conversations: 1,
        embeddedMessages: 60,
      });
    },
  );

  it(
    'exits 2 without creating anything when a read or a compaction names a schema that holds no store',
    spawnHeavy,
    async () => {
      const store = fresh();
      for (const args of [['stats'], ['summaries', 'x'], ['compact', 'x'], ['reembed']]) {
        const result = await run([...args, '--db', store.url], { MNEMO_EMBEDDER: 'hashed' });
        expect(result.code).toBe(2);
        expect(result.stderr).toMatch(/holds no mnemo store/);
      }
      const check = await run(['migrate', '--db', store.url, '--json']);
      expect((JSON.parse(check.stdout) as { fromVersion: number }).fromVersion).toBe(0);
    },
  );
});
