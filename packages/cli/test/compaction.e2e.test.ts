import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startScriptedOpenAiServer, type ScriptedOpenAiServer } from '@mnemo/models/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeWorkDirectory, meshTranscript, runMnemo } from './run-mnemo.js';

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

// Each test spawns the CLI five to eight times; on a loaded machine that outlasts the default 30 s.
const spawnHeavy = { timeout: 90_000 };

interface SummaryJson {
  id: string;
  userId: string;
  level: number;
  fromSeq: number;
  toSeq: number;
  content: string;
  tokens: number;
  foldedSummaryIds: string[];
  summarizer: string;
  inputTokens: number;
  outputTokens: number;
  fallbackReason?: string;
  createdAt: string;
}

interface SummariesJson {
  conversationId: string;
  messages: number;
  watermark: number;
  summaries: SummaryJson[];
}

interface CompactJson {
  conversationId: string;
  messages: number;
  watermark: { before: number; after: number };
  summaries: SummaryJson[];
}

interface ExpandJson {
  summary: SummaryJson;
  folded: SummaryJson[];
  messages: { seq: number; role: string; content: string; createdAt: string }[];
}

/** Replays a transcript into `r.db` and returns the id of the conversation it kept. */
async function replayIntoDatabase(turns: number, maxTokens: number): Promise<string> {
  await writeFile(join(work.path, 'mesh.jsonl'), meshTranscript(turns));
  const replay = await runMnemo(
    ['replay', 'mesh.jsonl', '--db', 'r.db', '--policy', 'summary', '--max-tokens', String(maxTokens), '--json'],
    { cwd: work.path },
  );
  expect(replay.code).toBe(0);
  const stats = JSON.parse((await runMnemo(['stats', '--db', 'r.db', '--json'], { cwd: work.path })).stdout) as {
    conversations: { conversationId: string }[];
  };
  return stats.conversations[0]!.conversationId;
}

async function runJson<T>(args: readonly string[], env?: Record<string, string>): Promise<T> {
  const run = await runMnemo(args, { cwd: work.path, ...(env === undefined ? {} : { env }) });
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout) as T;
}

/** Checks the invariants every summary list holds: rolling ranges from 1, provenance pointing backwards. */
function expectConsistentSummaries(summaries: readonly SummaryJson[], watermark: number): void {
  const seen = new Set<string>();
  let previousToSeq = 0;
  for (const summary of summaries) {
    expect(summary.fromSeq).toBe(1);
    expect(summary.toSeq).toBeGreaterThanOrEqual(previousToSeq);
    expect(summary.toSeq).toBeLessThanOrEqual(watermark);
    for (const id of summary.foldedSummaryIds) expect(seen.has(id)).toBe(true);
    seen.add(summary.id);
    previousToSeq = summary.toSeq;
  }
  expect(summaries[summaries.length - 1]?.toSeq ?? 0).toBe(watermark);
}

describe('mnemo summaries', spawnHeavy, () => {
  it('lists every summary a kept replay wrote, each covering 1..toSeq up to the watermark', async () => {
    const conversationId = await replayIntoDatabase(12, 150);

    const listed = await runJson<SummariesJson>(['summaries', conversationId, '--db', 'r.db', '--json']);

    expect(listed).toMatchObject({ conversationId, messages: 24 });
    expect(listed.summaries.length).toBeGreaterThan(0);
    expect(listed.watermark).toBeLessThan(listed.messages);
    expectConsistentSummaries(listed.summaries, listed.watermark);
    const table = await runMnemo(['summaries', conversationId, '--db', 'r.db'], { cwd: work.path });
    expect(table.stdout).toMatch(
      /^id\s+level\s+messages\s+tokens\s+summarizer\s+prompt \+ output\s+folded\s+created$/m,
    );
    for (const summary of listed.summaries)
      expect(table.stdout).toMatch(new RegExp(`^${summary.id}\\s+${summary.level}\\s+1–${summary.toSeq}\\s`, 'm'));
  });

  it('exits 2 for an unknown conversation and for a conversation of another user', async () => {
    const conversationId = await replayIntoDatabase(4, 150);

    const unknown = await runMnemo(['summaries', 'nope', '--db', 'r.db'], { cwd: work.path });
    const otherUser = await runMnemo(['summaries', conversationId, '--db', 'r.db', '--user', 'someone-else'], {
      cwd: work.path,
    });

    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('conversation "nope" has no messages');
    expect(otherUser.code).toBe(2);
    expect(otherUser.stderr).toContain('for user someone-else');
  });
});

describe('mnemo compact', spawnHeavy, () => {
  it('folds all but the newest turns now, prints what it wrote and moves the watermark', async () => {
    // At this budget the replay stays verbatim to 1,800 tokens, then folds down to its low mark (872 raw tokens), more than the 2 turns that compact keeps.
    const conversationId = await replayIntoDatabase(60, 2000);
    const before = await runJson<SummariesJson>(['summaries', conversationId, '--db', 'r.db', '--json']);

    const compacted = await runJson<CompactJson>([
      'compact',
      conversationId,
      '--db',
      'r.db',
      '--max-tokens',
      '2000',
      '--json',
    ]);

    expect(before.summaries.length).toBeGreaterThan(0);
    expect(compacted.watermark.before).toBe(before.watermark);
    expect(compacted.summaries.length).toBeGreaterThan(0);
    expect(compacted.watermark.after).toBe(compacted.summaries[compacted.summaries.length - 1]!.toSeq);
    expect(compacted.watermark.after).toBeGreaterThan(before.watermark);
    expect(compacted.watermark.after).toBeLessThan(compacted.messages);
    const after = await runJson<SummariesJson>(['summaries', conversationId, '--db', 'r.db', '--json']);
    expect(after.summaries.map((summary) => summary.id)).toEqual(
      [...before.summaries, ...compacted.summaries].map((summary) => summary.id),
    );
    expectConsistentSummaries(after.summaries, compacted.watermark.after);
    const stats = await runJson<{ summarizedThroughSeq: number; summaryCount: number; latestSummaryId: string }>([
      'stats',
      '--db',
      'r.db',
      '--conversation',
      conversationId,
      '--json',
    ]);
    expect(stats).toMatchObject({
      summarizedThroughSeq: compacted.watermark.after,
      summaryCount: after.summaries.length,
      latestSummaryId: after.summaries.at(-1)!.id,
    });
    const statsTable = await runMnemo(['stats', '--db', 'r.db', '--conversation', conversationId], { cwd: work.path });
    expect(statsTable.stdout).toMatch(
      new RegExp(
        `^watermark\\s+messages 1–${compacted.watermark.after} summarized \\([\\d,]+ tokens\\), ${compacted.messages - compacted.watermark.after} raw$`,
        'm',
      ),
    );
    expect(statsTable.stdout).toMatch(
      new RegExp(`^summaries\\s+${after.summaries.length} \\(latest ${after.summaries.at(-1)!.id}\\)$`, 'm'),
    );
    expect(statsTable.stdout).toMatch(/^net saved tokens\s+-?[\d,]+ \(-?[\d.]+%, after the summarizer's tokens\)$/m);

    const again = await runMnemo(['compact', conversationId, '--db', 'r.db', '--max-tokens', '2000'], {
      cwd: work.path,
    });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`nothing to compact in ${conversationId}`);
    expect(again.stdout).toMatch(/^summarizer: extractive@1 \(offline/m);
  });

  it('summarizes with the configured model, and records why when it falls back to the offline summarizer', async () => {
    // A budget this large keeps the replay from compacting, so the whole history is left for compact.
    const conversationId = await replayIntoDatabase(6, 100_000);
    server = await startScriptedOpenAiServer({
      replies: [{ content: 'Node 7 routes via the ridge relay at 3 to 8 hops.' }],
    });
    const endpoint = { MNEMO_LLM_BASE_URL: server.baseUrl, MNEMO_LLM_MODEL: 'mesh-model' };

    const compacted = await runJson<CompactJson>(['compact', conversationId, '--db', 'r.db', '--json'], endpoint);

    expect(compacted.summaries).toHaveLength(1);
    expect(compacted.summaries[0]).toMatchObject({
      summarizer: 'openai:mesh-model',
      content: 'Node 7 routes via the ridge relay at 3 to 8 hops.',
    });
    expect(compacted.summaries[0]!.fallbackReason).toBeUndefined();
    expect(server.requests.map((request) => (request.body as { model: string }).model)).toEqual(['mesh-model']);

    await server.close();
    // The summarizer retries twice, so three 500s make it fall back; the script is then used up.
    server = await startScriptedOpenAiServer({ replies: [{ status: 500 }, { status: 500 }, { status: 500 }] });
    await runMnemo(['replay', 'mesh.jsonl', '--db', 'r2.db', '--max-tokens', '100000', '--json'], { cwd: work.path });
    const second = JSON.parse((await runMnemo(['stats', '--db', 'r2.db', '--json'], { cwd: work.path })).stdout) as {
      conversations: { conversationId: string }[];
    };

    const fallback = await runMnemo(['compact', second.conversations[0]!.conversationId, '--db', 'r2.db'], {
      cwd: work.path,
      env: { MNEMO_LLM_BASE_URL: server.baseUrl, MNEMO_LLM_MODEL: 'mesh-model' },
    });

    expect(fallback.code).toBe(0);
    expect(fallback.stdout).toMatch(/^summarizer: openai:mesh-model at http:\/\/127\.0\.0\.1:\d+\/v1/m);
    expect(fallback.stdout).toMatch(/extractive@1 \(fallback\)/);
    expect(fallback.stdout).toMatch(
      /^fallback: \S+ was written by extractive@1 because the configured summarizer failed: .*500/m,
    );
  });

  it('exits 2 without creating a file when the database does not exist', async () => {
    const run = await runMnemo(['compact', 'node-7', '--db', 'missing.db'], { cwd: work.path });

    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^mnemo: cannot open SQLite database .*missing\.db: the file does not exist/);
    expect(existsSync(join(work.path, 'missing.db'))).toBe(false);
  });
});

describe('mnemo expand', spawnHeavy, () => {
  it('returns a summary with exactly the toSeq messages it stands for and the summaries it folded', async () => {
    const conversationId = await replayIntoDatabase(12, 150);
    const { summaries } = await runJson<SummariesJson>(['summaries', conversationId, '--db', 'r.db', '--json']);
    const latest = summaries[summaries.length - 1]!;

    // A replayed conversation is its own user: --conversation names it (without it, the default user has no such summary).
    const expanded = await runJson<ExpandJson>([
      'expand',
      latest.id,
      '--db',
      'r.db',
      '--conversation',
      conversationId,
      '--json',
    ]);
    expect((await runMnemo(['expand', latest.id, '--db', 'r.db'], { cwd: work.path })).code).toBe(2);

    expect(expanded.summary).toMatchObject({ id: latest.id, toSeq: latest.toSeq, content: latest.content });
    expect(expanded.messages).toHaveLength(latest.toSeq);
    expect(expanded.messages.map((message) => message.seq)).toEqual(
      Array.from({ length: latest.toSeq }, (_, index) => index + 1),
    );
    expect(expanded.folded.map((summary) => summary.id)).toEqual(latest.foldedSummaryIds);
    const text = await runMnemo(['expand', latest.id, '--db', 'r.db', '--user', conversationId], { cwd: work.path });
    expect(text.stdout).toContain(`summary ${latest.id} of conversation ${conversationId}`);
    expect(text.stdout).toContain(`${latest.toSeq} source messages:`);
    expect(text.stdout).toContain(
      `  #1  user  ${expanded.messages[0]!.createdAt}\n    ${expanded.messages[0]!.content}\n`,
    );
  });

  it('exits 2 not found for a summary id of another user and for an unknown id', async () => {
    const conversationId = await replayIntoDatabase(12, 150);
    const { summaries } = await runJson<SummariesJson>(['summaries', conversationId, '--db', 'r.db', '--json']);
    const id = summaries[0]!.id;

    const otherUser = await runMnemo(['expand', id, '--db', 'r.db', '--user', 'someone-else'], { cwd: work.path });
    const otherTenant = await runMnemo(
      ['expand', id, '--db', 'r.db', '--tenant', 'other-tenant', '--conversation', conversationId],
      {
        cwd: work.path,
      },
    );
    const unknown = await runMnemo(['expand', 'no-such-summary', '--db', 'r.db'], { cwd: work.path });

    for (const run of [otherUser, otherTenant]) {
      expect(run.code).toBe(2);
      expect(run.stderr).toBe(`mnemo: summary ${id} does not exist\n`);
    }
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe('mnemo: summary no-such-summary does not exist\n');
  });
});
