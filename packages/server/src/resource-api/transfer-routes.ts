import { isMemoryError, MemoryError, type Memory, type MessageInput, type Scope } from '@mnemo/core';
import { z } from 'zod';
import type { ServerApp, ServerDeps } from '../app/server-deps.js';
import { parseWith, registerRoute } from '../openapi/route-spec.js';
import { requestScope, requireConversation } from './request-scope.js';
import { idSchema, messageInputSchema, userQuerySchema } from './resource-schemas.js';

const exportPageSize = 1000;
const transferQuerySchema = userQuerySchema.extend({ conversation: idSchema.describe('conversation id') });
// Fields an export writes that an import recomputes: the store assigns ids and seqs, the engine counts tokens.
const exportOnlyFields = ['id', 'seq', 'tokens'] as const;

/** Mounts `GET /v1/export` (a conversation as JSONL) and `POST /v1/import` (JSONL into a conversation, all or nothing). */
export function mountTransferRoutes(app: ServerApp, deps: ServerDeps): void {
  const { memory, routes } = deps;

  registerRoute(
    app,
    routes,
    {
      method: 'get',
      path: '/v1/export',
      summary: 'Export a conversation as JSONL: one stored message per line, oldest first',
      tags: ['transfer'],
      query: transferQuerySchema,
      responses: {
        200: { description: 'the messages', contentType: 'application/x-ndjson' },
        404: { description: 'no such conversation' },
      },
    },
    async (c, { query }) => {
      const scope = requestScope(c, query.conversation, { query: query.user_id });
      await requireConversation(memory, scope);
      return new Response(exportStream(memory, scope), {
        status: 200,
        headers: { 'content-type': 'application/x-ndjson; charset=utf-8' },
      });
    },
  );

  registerRoute(
    app,
    routes,
    {
      method: 'post',
      path: '/v1/import',
      summary: 'Import JSONL messages (the export format) into a conversation, all or nothing',
      description:
        'Every line is parsed and validated before anything is written; one bad line rejects the whole body, naming the line. ' +
        '`id`, `seq` and `tokens` of exported lines are ignored (recomputed). The messages are appended after any the conversation holds.',
      tags: ['transfer'],
      query: transferQuerySchema,
      bodyFormat: 'jsonl',
      responses: {
        201: {
          description: 'what was imported',
          schema: z.object({
            conversationId: z.string(),
            userId: z.string(),
            imported: z.number().int(),
            firstSeq: z.number().int(),
            lastSeq: z.number().int(),
          }),
        },
      },
    },
    async (c, { query, text }) => {
      const scope = requestScope(c, query.conversation, { query: query.user_id });
      const { messages, lines } = parseJsonl(text);
      let stored;
      try {
        // One append: core validates the whole batch, then writes it in one transaction.
        stored = await memory.append(scope, messages);
      } catch (error) {
        throw withLineNumber(error, lines);
      }
      return c.json(
        {
          conversationId: scope.conversationId,
          userId: scope.userId,
          imported: stored.length,
          firstSeq: stored[0]?.seq ?? 0,
          lastSeq: stored.at(-1)?.seq ?? 0,
        },
        201,
      );
    },
  );
}

function exportStream(memory: Memory, scope: Scope): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let afterSeq = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const page = await memory.listMessages(scope, { afterSeq, limit: exportPageSize });
      if (page.length === 0) {
        controller.close();
        return;
      }
      afterSeq = page.at(-1)?.seq ?? afterSeq;
      controller.enqueue(encoder.encode(page.map((message) => `${JSON.stringify(message)}\n`).join('')));
    },
  });
}

/** Parses JSONL into message inputs, checking every line's shape; blank lines are skipped. */
function parseJsonl(text: string): { messages: MessageInput[]; lines: number[] } {
  const messages: MessageInput[] = [];
  const lines: number[] = [];
  text.split('\n').forEach((raw, index) => {
    if (raw.trim() === '') return;
    const line = index + 1;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      throw new MemoryError('invalid_input', `line ${line}: not valid JSON (${(error as Error).message})`, {
        details: { line },
      });
    }
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      value = Object.fromEntries(
        Object.entries(value).filter(([key]) => !(exportOnlyFields as readonly string[]).includes(key)),
      );
    }
    messages.push(parseWith(messageInputSchema, value, `line ${line}`) as unknown as MessageInput);
    lines.push(line);
  });
  if (messages.length === 0)
    throw new MemoryError('invalid_input', 'the body holds no messages (one JSON message per line)', {
      details: { field: 'body' },
    });
  return { messages, lines };
}

// Core names a bad message by its index in the batch; the client knows lines.
function withLineNumber(error: unknown, lines: readonly number[]): unknown {
  if (!isMemoryError(error, 'invalid_input')) return error;
  const index = typeof error.details?.index === 'number' ? error.details.index : lines.length === 1 ? 0 : undefined;
  const line = index === undefined ? undefined : lines[index];
  if (line === undefined) return error;
  return new MemoryError('invalid_input', `line ${line}: ${error.message.replace(/^message \d+: /, '')}`, {
    cause: error,
    details: { ...error.details, line },
  });
}
