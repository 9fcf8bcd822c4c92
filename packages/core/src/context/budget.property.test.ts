import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemory } from '../engine/create-memory.js';
import { isMemoryError } from '../errors/memory-error.js';
import type { MessageInput } from '../messages/message.js';
import { InMemoryStore } from '../testing/in-memory-store.js';
import { createGptTokenCounter } from '../tokens/gpt-token-counter.js';
import { contextPolicies, type ContextMessage } from './context-types.js';

const counter = createGptTokenCounter();
const vocabulary = [
  'relay',
  'node',
  '!a3f9',
  'SNR',
  '-7.5',
  'dB',
  'battery',
  '3400mAh',
  'Zürich',
  '🚀',
  'ok',
  'the',
  'trip',
  '2024-06-01',
  '中文',
];

const text = (maxWords: number) =>
  fc.array(fc.constantFrom(...vocabulary), { minLength: 1, maxLength: maxWords }).map((words) => words.join(' '));

// A step is a user message, an assistant reply, or an assistant tool call with all its results.
const step = fc.oneof(
  { weight: 5, arbitrary: text(40).map((content) => [{ role: 'user', content }] as MessageInput[]) },
  { weight: 5, arbitrary: text(40).map((content) => [{ role: 'assistant', content }] as MessageInput[]) },
  { weight: 1, arbitrary: text(1500).map((content) => [{ role: 'user', content }] as MessageInput[]) },
  {
    weight: 2,
    arbitrary: fc.array(text(60), { minLength: 1, maxLength: 3 }).map((results) => {
      const ids = results.map((_, index) => `call_${index}`);
      return [
        {
          role: 'assistant',
          content: '',
          toolCalls: ids.map((id) => ({ id, type: 'function', function: { name: 'lookup', arguments: '{"q":1}' } })),
        },
        ...results.map((content, index) => ({ role: 'tool', toolCallId: ids[index], content })),
      ] as MessageInput[];
    }),
  },
);

function checkToolPairs(messages: readonly ContextMessage[]): void {
  messages.forEach((message, index) => {
    if (message.role === 'tool') {
      const caller = messages
        .slice(0, index)
        .reverse()
        .find((earlier) => earlier.role !== 'tool');
      expect(caller?.toolCalls?.map((call) => call.id)).toContain(message.toolCallId);
    }
    if (message.toolCalls !== undefined) {
      const results = messages
        .slice(index + 1)
        .filter(
          (later, offset, rest) => later.role === 'tool' && rest.slice(0, offset).every((m) => m.role === 'tool'),
        );
      expect(results.map((result) => result.toolCallId).sort()).toEqual(
        message.toolCalls.map((call) => call.id).sort(),
      );
    }
  });
}

describe('context budget (property)', () => {
  it('never exceeds maxTokens, recounted with the real tokenizer, over 1,000 random conversations, budgets and compactions', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 0, maxLength: 30 }),
        fc.integer({ min: 1, max: 4000 }),
        fc.constantFrom(...contextPolicies),
        fc.integer({ min: 1, max: 6 }),
        fc.option(text(30), { nil: undefined }),
        fc.boolean(),
        async (steps, maxTokens, policy, windowTurns, system, compact) => {
          const memory = createMemory({
            store: new InMemoryStore(),
            tokenCounter: counter,
            worker: { autoStart: false },
          });
          const scope = { conversationId: 'c' };
          const history = steps.flat();
          if (history.length > 0) await memory.append(scope, history);
          if (compact && history.length > 0) await memory.compact(scope);
          let built;
          try {
            built = await memory.buildContext(scope, {
              policy,
              maxTokens,
              windowTurns,
              ...(system === undefined ? {} : { system }),
            });
          } catch (error) {
            // The only allowed failure: the pinned system prompt alone does not fit.
            expect(isMemoryError(error, 'budget_exceeded')).toBe(true);
            expect(
              counter.countMessage({ role: 'system', content: system ?? '' }) + counter.requestOverheadTokens,
            ).toBeGreaterThan(maxTokens);
            return;
          }
          const { messages, report } = built;
          const recounted = messages.reduce(
            (sum, message) => sum + counter.countMessage(message),
            counter.requestOverheadTokens,
          );
          expect(recounted).toBe(report.sentTokens);
          expect(recounted).toBeLessThanOrEqual(maxTokens);
          checkToolPairs(messages);

          // Sent messages are the newest stored ones, contiguous; every other one is reported dropped.
          const stored = await memory.listMessages(scope);
          // Memory blocks (system prompt, facts, summary, recalled snippets) are system messages; history here has none.
          const sent = messages.filter((message) => message.role !== 'system');
          const sentSeqs = report.parts.find((part) => part.kind === 'recent')?.seqRange;
          const droppedCount = report.dropped.reduce((sum, run) => sum + run.messageCount, 0);
          expect(droppedCount + sent.length).toBe(stored.length);
          if (sentSeqs !== undefined) expect(sentSeqs.to).toBe(stored.length);
          const truncatedSeqs = new Set(report.truncated.map((item) => item.seq));
          sent.forEach((message, index) => {
            const original = stored[stored.length - sent.length + index]!;
            if (truncatedSeqs.has(original.seq)) expect(message.content).toMatch(/\[mnemo: message truncated/);
            else expect(message.content).toBe(original.content);
          });
          expect(report.fullHistoryTokens).toBe(
            stored.reduce((sum, message) => sum + message.tokens, 0) +
              counter.requestOverheadTokens +
              (system === undefined ? 0 : counter.countMessage({ role: 'system', content: system })),
          );
        },
      ),
      { numRuns: 1000 },
    );
  }, 120_000);
});
