import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Job, Message, Summary } from '@mnemo/core';
import { startScriptedOpenAiServer, type ScriptedOpenAiServer, type ScriptedReply } from '@mnemo/models/testing';
import { createSqliteStore } from '@mnemo/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeWorkDirectory } from '../run-mnemo.js';
import { recordFigures } from './reliability-figures.js';
import { postJson, startServe, waitFor, tearDown, type ServedMnemo } from './served-mnemo.js';

// LLM faults (issue 12): one fault-injecting OpenAI-protocol upstream behind the real `mnemo serve`, with
// short timeouts. Each fault, through the proxy (streamed and not) and for background compaction and
// extraction: what the client gets and how fast, the user's turn stored once, a partial reply stored
// and marked, the server healthy, the job recorded with its error and fallback, and a later retry that
// succeeds storing nothing twice.
const firstByteTimeoutMs = 1500;
const idleTimeoutMs = 1000;
const modelTimeoutMs = 1500;
/** Generous bound on a faulty answer: the point is that the client is not held for the 60 s hang. */
const answerBoundMs = 15_000;
const never = new Promise<never>(() => undefined);

const faults = ['500', '429', 'hang', 'malformed', 'cut', 'broken-sse', 'stall'] as const;
type Fault = (typeof faults)[number];

/** The upstream's answer to a fault; `stream` says whether the client asked for events. */
function faultReply(fault: Fault, stream: boolean): ScriptedReply {
  switch (fault) {
    case '500':
      return { status: 500 };
    case '429':
      return { status: 429, headers: { 'retry-after': '1' } };
    case 'hang':
      return { delayMs: 60_000 };
    case 'malformed':
      return {
        raw: stream ? 'data: {"choices":[{"delta":{"content":"Hel\n\n' : '{"id":"chatcmpl-1","choices":[{"message":',
        contentType: stream ? 'text/event-stream' : 'application/json',
      };
    case 'cut':
      return stream
        ? { content: 'The ridge relay is up and holding', breakAfterChunks: 2 }
        : {
            raw: JSON.stringify({
              id: 'chatcmpl-1',
              object: 'chat.completion',
              choices: [
                { index: 0, message: { role: 'assistant', content: 'The ridge relay is up' }, finish_reason: 'stop' },
              ],
            }),
            breakAfterBytes: 40,
          };
    case 'broken-sse':
      return stream
        ? { raw: 'data: {"choices":[{"delta":{"content"\n\ndata: garbage\n\n', contentType: 'text/event-stream' }
        : { raw: 'data: garbage\n\n', contentType: 'text/event-stream' };
    case 'stall':
      return { content: 'The ridge relay is up and holding', pause: { afterChunks: 2, until: never } };
  }
}

let work: { path: string; remove: () => Promise<void> };
let served: ServedMnemo;
let upstream: ScriptedOpenAiServer;
const db = () => join(work.path, 'faults.db');
/** Background conversations whose marker currently makes the upstream fail. */
const failingMarkers = new Set<string>();

beforeAll(async () => {
  work = await makeWorkDirectory();
  upstream = await startScriptedOpenAiServer({
    replies: [],
    recordRequests: false,
    // A proxy client names its fault in `model`; a background call is failed by the marker in its prompt.
    replyTo: (request) => {
      const model = String(request.model);
      if (model.startsWith('fault-')) return faultReply(model.slice('fault-'.length) as Fault, request.stream === true);
      if (model === 'bg-model') {
        const prompt = JSON.stringify(request.messages);
        const marker = [...failingMarkers].find((candidate) => prompt.includes(candidate));
        if (marker !== undefined) return faultReply(marker.slice('[bg:'.length, -1) as Fault, false);
        if (request.response_format !== undefined)
          return { content: JSON.stringify({ facts: [], entities: [], relations: [] }) };
        return { content: 'Node reports were summarized: the ridge relay holds at a few hops.' };
      }
      return { content: 'The ridge relay is up and holding.' };
    },
  });
  await writeFile(
    join(work.path, 'mnemo.config.json'),
    JSON.stringify({
      llm: {
        baseUrl: upstream.baseUrl,
        model: 'bg-model',
        timeoutMs: modelTimeoutMs,
        firstByteTimeoutMs,
        idleTimeoutMs,
      },
      context: { maxTokens: 500 },
    }),
  );
  served = await startServe(['--db', db(), '--workers', '1'], { cwd: work.path });
}, 60_000);

afterAll(() => tearDown({ served, upstream, work }), 60_000);

async function storedMessages(conversationId: string): Promise<Message[]> {
  const store = createSqliteStore({ path: db() });
  try {
    return await store.listMessages({ tenantId: 'default', userId: conversationId, conversationId });
  } finally {
    await store.close();
  }
}

/** Sends a chat request through the proxy and reads the whole answer (an SSE error event is read as text). */
async function chat(
  user: string,
  model: string,
  stream: boolean,
  content: string,
): Promise<{ status: number; text: string; retryAfter: string | null; elapsedMs: number; dropped: boolean }> {
  const started = performance.now();
  try {
    const response = await fetch(`${served.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, user, stream, messages: [{ role: 'user', content }] }),
      signal: AbortSignal.timeout(answerBoundMs * 2),
    });
    const text = await response.text().catch((error: unknown) => `(body cut: ${String(error)})`);
    return {
      status: response.status,
      text,
      retryAfter: response.headers.get('retry-after'),
      elapsedMs: Math.round(performance.now() - started),
      dropped: false,
    };
  } catch (error) {
    return {
      status: 0,
      text: String(error),
      retryAfter: null,
      elapsedMs: Math.round(performance.now() - started),
      dropped: true,
    };
  }
}

/** What the client should see for a fault: the status, and a code or phrase in the body. */
function expectedAnswer(fault: Fault, stream: boolean): { status: number; says: string } {
  if (fault === '500') return { status: 500, says: 'scripted status 500' };
  if (fault === '429') return { status: 429, says: 'scripted status 429' };
  if (fault === 'hang') return { status: 504, says: 'upstream_timeout' };
  if (stream && fault === 'stall') return { status: 200, says: 'upstream_timeout' };
  if (stream && (fault === 'cut' || fault === 'broken-sse' || fault === 'malformed'))
    return { status: 200, says: 'incomplete' };
  // An event stream to a JSON request is no chat completion: 502 model_failed, as a malformed body.
  return { status: 502, says: 'model_failed' };
}

describe('LLM faults through the proxy of mnemo serve', () => {
  it(
    'answers each upstream fault within its timeout, stores the turn once and a partial reply marked, and a retry stores nothing twice',
    { timeout: 180_000 },
    async (context) => {
      const outcomes: [string, string][] = [];
      const problems: string[] = [];
      let slowest = 0;
      for (const stream of [false, true]) {
        // A stall is a pause between two events of a stream; a JSON reply that stops is the `cut` case.
        for (const fault of faults.filter((candidate) => stream || candidate !== 'stall')) {
          const user = `proxy-${fault}-${stream ? 'stream' : 'json'}`;
          const question = `Is the ridge relay up? (${user})`;
          const answer = await chat(user, `fault-${fault}`, stream, question);
          slowest = Math.max(slowest, answer.elapsedMs);
          const expected = expectedAnswer(fault, stream);
          const codes = [...answer.text.matchAll(/"code":"(\w+)"/g)].map((match) => match[1]);
          outcomes.push([
            `${stream ? 'stream' : 'json'}: ${fault}`,
            `${answer.status}${codes.length > 0 ? ` ${codes.at(-1)}` : ''}, turn stored ×${0}`,
          ]);
          if (answer.dropped || answer.status !== expected.status || !answer.text.includes(expected.says))
            problems.push(
              `${user}: got ${answer.status} ${answer.text.slice(0, 200)}, expected ${expected.status} with "${expected.says}"`,
            );
          if (fault === '429' && answer.retryAfter !== '1')
            problems.push(`${user}: Retry-After ${answer.retryAfter} was not relayed`);
          if (answer.elapsedMs > answerBoundMs) problems.push(`${user}: answered after ${answer.elapsedMs} ms`);
          if ((await fetch(`${served.url}/health`)).status !== 200)
            problems.push(`${user}: /health failed after the fault`);

          // The partial reply of a broken stream is stored asynchronously, once the relay sees the break.
          const partialExpected = stream && (fault === 'cut' || fault === 'stall');
          await waitFor(
            async () => !partialExpected || (await storedMessages(user)).length === 2,
            10_000,
            `the partial reply of ${user}`,
          ).catch(() => undefined);
          const afterFault = await storedMessages(user);
          const turns = afterFault.filter((message) => message.role === 'user');
          outcomes[outcomes.length - 1]![1] = outcomes[outcomes.length - 1]![1].replace('×0', `×${turns.length}`);
          if (turns.length !== 1 || turns[0]!.content !== question)
            problems.push(`${user}: ${turns.length} user turns stored after the fault`);
          const partial = afterFault.filter((message) => message.role === 'assistant');
          if (
            partialExpected &&
            (partial.length !== 1 ||
              (partial[0]!.metadata as { proxy?: { incomplete?: boolean } } | undefined)?.proxy?.incomplete !== true)
          ) {
            problems.push(
              `${user}: partial reply ${JSON.stringify(partial.map((message) => [message.content, message.metadata]))} not stored marked incomplete`,
            );
          }
          if (!partialExpected && partial.length !== 0) problems.push(`${user}: a reply was stored for a failed call`);

          // The client retries the same request; the upstream has recovered.
          const retry = await chat(user, 'recovered-model', stream, question);
          if (retry.status !== 200 || !retry.text.includes('holding'))
            problems.push(`${user}: retry got ${retry.status} ${retry.text.slice(0, 200)}`);
          await waitFor(
            async () =>
              (await storedMessages(user)).filter((message) => message.role === 'assistant').length ===
              partial.length + 1,
            10_000,
            `the reply of ${user}'s retry`,
          ).catch(() => undefined);
          const afterRetry = await storedMessages(user);
          if (afterRetry.filter((message) => message.role === 'user').length !== 1)
            problems.push(`${user}: the retry stored the user turn again`);
          if (afterRetry.length !== afterFault.length + 1)
            problems.push(
              `${user}: ${afterRetry.length - afterFault.length} messages stored by the retry (expected 1)`,
            );
        }
      }
      recordFigures(context, 'LLM faults (proxy)', [
        ['fault cases (json + stream)', outcomes.length],
        ...outcomes,
        ['slowest faulty answer ms', slowest],
        ['problems', problems.length],
      ]);
      expect(problems).toEqual([]);
      expect(served.child.exitCode).toBeNull();
    },
  );

  it(
    'records each fault of background compaction and extraction with its fallback, and a later success stores nothing twice',
    { timeout: 180_000 },
    async (context) => {
      const backgroundFaults = faults.filter((fault) => fault !== 'broken-sse' && fault !== 'stall');
      const problems: string[] = [];
      let fallbacks = 0;
      let failedJobs = 0;
      const store = createSqliteStore({ path: db() });
      try {
        const conversationOf = (fault: Fault) => `bg-${fault}`;
        const scopeOf = (fault: Fault) => ({
          tenantId: 'default',
          userId: conversationOf(fault),
          conversationId: conversationOf(fault),
        });
        const jobsOf = (fault: Fault) => store.listJobs(scopeOf(fault));
        const settled = async (fault: Fault) =>
          (await jobsOf(fault)).every((job: Job) => job.status === 'done' || job.status === 'failed');
        const append = async (fault: Fault, from: number, count: number) => {
          for (let index = from; index < from + count; index += 1) {
            const content = `[bg:${fault}] message ${index}: node ${index % 5} reports ${index % 9} hops and battery ${50 + index} percent near the ridge relay.`;
            const answer = await postJson(
              `${served.url}/v1/conversations/${conversationOf(fault)}/messages`,
              { messages: [{ role: index % 2 === 0 ? 'user' : 'assistant', content }] },
              { 'idempotency-key': `bg-${fault}-${index}` },
            );
            if (answer.status !== 201) problems.push(`${fault}: append ${index} got ${answer.status}`);
          }
        };
        for (const fault of backgroundFaults) failingMarkers.add(`[bg:${fault}]`);
        await Promise.all(backgroundFaults.map((fault) => append(fault, 0, 24)));
        for (const fault of backgroundFaults)
          await waitFor(() => settled(fault), 90_000, `the jobs of ${conversationOf(fault)}`);

        for (const fault of backgroundFaults) {
          const jobs = await jobsOf(fault);
          const summaries = await store.listSummaries(scopeOf(fault));
          const compactJobs = jobs.filter((job) => job.kind === 'compact');
          const extractJobs = jobs.filter((job) => job.kind === 'extract');
          failedJobs += jobs.filter((job) => job.status === 'failed').length;
          if (compactJobs.length === 0 || summaries.length === 0)
            problems.push(`${fault}: no compaction ran (${compactJobs.length} jobs, ${summaries.length} summaries)`);
          for (const summary of summaries) {
            if (summary.fallbackReason === undefined || summary.summarizer !== 'extractive@1')
              problems.push(`${fault}: summary ${summary.id} by ${summary.summarizer} has no fallback reason`);
            else fallbacks += 1;
          }
          // The compaction that fell back is done, degraded, with the fallback's reason as its lastError.
          if (!compactJobs.some((job) => job.status === 'done' && (job.lastError ?? '').includes('fell back'))) {
            problems.push(
              `${fault}: no compact job recorded its fallback (${JSON.stringify(compactJobs.map((job) => [job.status, job.lastError]))})`,
            );
          }
          // mnemo serve extracts facts with the offline heuristic extractor: an upstream fault never reaches it.
          for (const job of extractJobs)
            if (job.status !== 'done' || job.lastError !== undefined)
              problems.push(`${fault}: extract job ${job.status} (${job.lastError ?? ''})`);
        }

        // The model recovers: later compactions and extractions succeed, and nothing is stored twice.
        failingMarkers.clear();
        await Promise.all(backgroundFaults.map((fault) => append(fault, 0, 40)));
        for (const fault of backgroundFaults)
          await waitFor(() => settled(fault), 90_000, `the jobs of ${conversationOf(fault)} after recovery`);
        for (const fault of backgroundFaults) {
          const messages = await store.listMessages(scopeOf(fault));
          if (messages.length !== 40 || messages.some((message, index) => message.seq !== index + 1))
            problems.push(`${fault}: ${messages.length} messages stored for 40 distinct appends`);
          const summaries: Summary[] = await store.listSummaries(scopeOf(fault));
          const newest = summaries.at(-1);
          if (newest?.summarizer !== 'openai:bg-model')
            problems.push(`${fault}: the newest summary after recovery is by ${newest?.summarizer}`);
          const row = await store.getConversation(scopeOf(fault));
          if (row?.summarizedThroughSeq !== newest?.toSeq)
            problems.push(
              `${fault}: watermark ${row?.summarizedThroughSeq} is not the newest summary's ${newest?.toSeq}`,
            );
          if (new Set(summaries.map((summary) => `${summary.level}:${summary.toSeq}`)).size !== summaries.length)
            problems.push(`${fault}: two summaries cover the same range`);
        }
      } finally {
        await store.close();
      }
      recordFigures(context, 'LLM faults (background)', [
        ['faults', backgroundFaults.join(', ')],
        ['summaries written by the fallback, reason recorded', fallbacks],
        ['jobs failed for good', failedJobs],
        ['problems', problems.length],
      ]);
      expect(problems).toEqual([]);
      expect((await fetch(`${served.url}/health`)).status).toBe(200);
    },
  );
});
