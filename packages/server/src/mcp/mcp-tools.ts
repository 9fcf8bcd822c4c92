import {
  contextPolicies,
  maxContextTokens,
  MemoryError,
  memoryToolInputSchema,
  ownerOf,
  recallModes,
  resolveScope,
  toOpenAiMessages,
  type Fact,
  type JsonSchema,
  type Memory,
  type Scope,
  type UserNaming,
  type UserScope,
} from '@mnemo/core';
import { normalizeFactValue, toAttributeKey } from '@mnemo/core/internals';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { parseWith } from '../openapi/route-spec.js';

/**
 * Who a tool call acts for: the tenant (from the API key, or the stdio process's flag) and the user when
 * the call names none. A conversation named with no user anywhere is its own user, as over REST (`ownerOf`).
 */
export interface McpCallContext {
  readonly tenantId: string;
  /** The user the connection names (the `X-Mnemo-User` header, `mnemo mcp --user`), if it names one. */
  readonly namedUserId?: string;
  readonly signal?: AbortSignal;
}

/** One tool mnemo serves over MCP: what `tools/list` shows, and what `tools/call` runs. Errors are thrown as MemoryErrors. */
export interface McpTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  run(args: unknown, context: McpCallContext): Promise<CallToolResult>;
}

/** What the tools work on: the engine (the `memory` tool is its `memoryTool`). */
export interface McpToolsOptions {
  readonly memory: Memory;
}

const userIdField = z
  .string()
  .min(1)
  .max(256)
  .optional()
  .describe(
    'The user; default: the connection\'s user, else (for a conversation) the conversation is its own user, as over REST, else "default". A user_id other than the connection\'s is refused.',
  );
const conversationIdField = z.string().min(1).max(256).describe('The conversation id, e.g. a chat or a radio node.');

const rememberInput = z.strictObject({
  conversation_id: conversationIdField,
  role: z.enum(['user', 'assistant', 'system']).describe('Who said it.'),
  content: z.string().min(1).describe('The message text, verbatim.'),
  user_id: userIdField,
});
const getContextInput = z.strictObject({
  conversation_id: conversationIdField,
  max_tokens: z
    .number()
    .int()
    .min(1)
    .max(maxContextTokens)
    .optional()
    .describe("Token budget of the whole context; default: the server's."),
  policy: z.enum(contextPolicies).optional().describe("How to choose the messages; default: the server's."),
  system: z.string().optional().describe('System prompt to pin first.'),
  query: z.string().optional().describe('The current question; the hybrid policy recalls past messages with it.'),
  recall: z
    .enum(recallModes)
    .optional()
    .describe(
      "When the hybrid policy recalls: when-asked (only for a turn that asks something) or every-turn; default: the server's.",
    ),
  user_id: userIdField,
});
const recallInput = z.strictObject({
  query: z.string().min(1).describe('What to look for, in words.'),
  conversation_id: z
    .string()
    .min(1)
    .max(256)
    .optional()
    .describe("Search only this conversation; default: all of the user's."),
  k: z.number().int().min(1).max(50).optional().describe('How many messages to return; default 5.'),
  neighbours: z
    .number()
    .int()
    .min(0)
    .max(5)
    .optional()
    .describe('Messages before and after each hit to include; default 0.'),
  user_id: userIdField,
});
const listFactsInput = z.strictObject({
  subject: z.string().min(1).optional().describe('Only facts about this subject (`user`, or a name).'),
  attribute: z.string().min(1).optional().describe('Only this attribute, e.g. `home_town`.'),
  include_history: z.boolean().optional().describe('Also superseded and retired facts; default false.'),
  user_id: userIdField,
});
const factSelection = {
  fact_id: z.string().min(1).optional().describe("The fact's id, as `list_facts` shows it in brackets."),
  attribute: z
    .string()
    .min(1)
    .optional()
    .describe('Or the attribute of the current fact, e.g. `main_relay` (with `subject`, default `user`).'),
  subject: z.string().min(1).optional().describe('The subject with `attribute`: `user` (default) or a name.'),
  value: z
    .string()
    .min(1)
    .optional()
    .describe('With `attribute`: only the current fact with this value (for attributes with several, like `likes`).'),
};
const forgetInput = z.strictObject({ ...factSelection, user_id: userIdField });
const correctInput = z.strictObject({
  ...factSelection,
  new_value: z
    .string()
    .min(1)
    .max(4096)
    .optional()
    .describe('The corrected value; it supersedes the fact, whose old value stays in the history.'),
  new_text: z
    .string()
    .min(1)
    .max(4096)
    .optional()
    .describe("The corrected statement, in the user's words; default `attribute: value`."),
  expires_at: z.iso
    .datetime({ offset: true })
    .nullable()
    .optional()
    .describe(
      'When the fact expires (ISO 8601): from then on it leaves every context and stays in its history; null: never.',
    ),
  user_id: userIdField,
});
const memoryUserInput = z.looseObject({ user_id: userIdField });

/** The tools mnemo serves over MCP: `remember`, `get_context`, `recall`, `list_facts`, `forget`, `correct` and the `memory` tool. */
export function createMcpTools(options: McpToolsOptions): McpTool[] {
  const { memory } = options;
  const tools: McpTool[] = [
    {
      name: 'remember',
      description:
        "Store one message of a conversation in mnemo's long-term memory, verbatim. Returns its position (seq) and token count.",
      inputSchema: toInputSchema(rememberInput),
      async run(args, context) {
        const input = parseWith(rememberInput, args, 'arguments');
        const scope = conversationOf(context, input.conversation_id, input.user_id);
        const [stored] = await memory.append(scope, { role: input.role, content: input.content }, signalOf(context));
        return text(
          `Stored as message ${stored?.seq} of conversation ${JSON.stringify(scope.conversationId)} (${stored?.tokens} tokens).`,
        );
      },
    },
    {
      name: 'get_context',
      description:
        'Build the context to send a model for a conversation, under a token budget: recent turns verbatim, a summary of older ones, ' +
        'facts and recalled messages (by policy). Returns the messages (OpenAI chat shape) and a report of what was sent, left out and saved.',
      inputSchema: toInputSchema(getContextInput),
      async run(args, context) {
        const input = parseWith(getContextInput, args, 'arguments');
        const scope = conversationOf(context, input.conversation_id, input.user_id);
        const built = await memory.buildContext(scope, {
          ...(input.policy === undefined ? {} : { policy: input.policy }),
          ...(input.max_tokens === undefined ? {} : { maxTokens: input.max_tokens }),
          ...(input.system === undefined ? {} : { system: input.system }),
          ...(input.query === undefined ? {} : { query: input.query }),
          ...(input.recall === undefined ? {} : { recall: input.recall }),
          ...signalOf(context),
        });
        return json({ messages: toOpenAiMessages(built.messages), report: built.report });
      },
    },
    {
      name: 'recall',
      description:
        "Search the user's past messages (all conversations, or one) for what a question needs: keyword and vector search, fused. Returns the messages, best first.",
      inputSchema: toInputSchema(recallInput),
      async run(args, context) {
        const input = parseWith(recallInput, args, 'arguments');
        const user = ownerOf(context.tenantId, callNamings(context, input.user_id), input.conversation_id);
        const { hits } = await memory.searchRecall(user, input.query, {
          k: input.k ?? 5,
          ...(input.conversation_id === undefined ? {} : { conversations: [input.conversation_id] }),
          ...(input.neighbours === undefined ? {} : { neighbours: input.neighbours }),
          ...signalOf(context),
        });
        const lines = hits.map((hit, index) => {
          const around = (hit.neighbours ?? []).map(
            (message) => `     #${message.seq} ${message.role}: ${message.content}`,
          );
          return [
            `${index + 1}. [${hit.conversationId} #${hit.message.seq}, ${hit.message.role}, ${hit.message.createdAt}] ${hit.message.content}`,
            ...around,
          ].join('\n');
        });
        const structured = hits.map((hit) => ({
          conversationId: hit.conversationId,
          seq: hit.message.seq,
          role: hit.message.role,
          content: hit.message.content,
          createdAt: hit.message.createdAt,
          score: hit.score,
        }));
        return {
          content: [{ type: 'text', text: hits.length === 0 ? 'No stored message matches.' : lines.join('\n') }],
          structuredContent: { hits: structured },
        };
      },
    },
    {
      name: 'list_facts',
      description:
        'List the durable facts mnemo extracted about the user (name, places, dates, preferences, …): current ones by default, or their history.',
      inputSchema: toInputSchema(listFactsInput),
      async run(args, context) {
        const input = parseWith(listFactsInput, args, 'arguments');
        const query = {
          ...(input.subject === undefined ? {} : { subject: input.subject }),
          ...(input.attribute === undefined ? {} : { attribute: input.attribute }),
        };
        const user = userOf(context, input.user_id);
        const facts =
          input.include_history === true
            ? await memory.facts.history(user, query, signalOf(context))
            : await memory.facts.list(user, query, signalOf(context));
        const lines = facts.map((fact) => `- [${fact.id}] ${describeFact(fact)}`);
        return {
          content: [{ type: 'text', text: facts.length === 0 ? 'No facts stored.' : lines.join('\n') }],
          structuredContent: { facts: facts.map((fact) => ({ ...fact })) },
        };
      },
    },
    {
      name: 'forget',
      description:
        'Retire facts about the user that are no longer true or that the user asked you to forget: by `fact_id`, or every current fact of an `attribute` ' +
        '(optionally only the one with `value`). They leave every context and stay in the history; the messages they came from are not erased.',
      inputSchema: toInputSchema(forgetInput),
      async run(args, context) {
        const input = parseWith(forgetInput, args, 'arguments');
        const user = userOf(context, input.user_id);
        const facts = await selectFacts(memory, user, input, signalOf(context));
        const retired = [];
        for (const fact of facts) retired.push(await memory.facts.retire(user, fact.id, signalOf(context)));
        return {
          content: [
            { type: 'text', text: retired.map((fact) => `Retired [${fact.id}] ${describeFact(fact)}`).join('\n') },
          ],
          structuredContent: { facts: retired.map((fact) => ({ ...fact })) },
        };
      },
    },
    {
      name: 'correct',
      description:
        'Correct one current fact about the user (`new_value`, optionally `new_text`): the corrected fact supersedes it and the old value stays in the history. ' +
        'Or set when it expires (`expires_at`, ISO 8601; null: never). Select it by `fact_id`, or by `attribute` (and `value` when the attribute has several).',
      inputSchema: toInputSchema(correctInput),
      async run(args, context) {
        const input = parseWith(correctInput, args, 'arguments');
        if (input.new_value === undefined && input.expires_at === undefined) {
          throw new MemoryError('invalid_input', 'give new_value (a correction) or expires_at', {
            details: { field: 'new_value' },
          });
        }
        const user = userOf(context, input.user_id);
        const facts = await selectFacts(memory, user, input, signalOf(context));
        if (facts.length > 1) {
          throw new MemoryError(
            'conflict',
            `${facts.length} current facts match; name one by fact_id or value: ${facts.map((fact) => `[${fact.id}] ${fact.value}`).join(', ')}`,
            {
              details: { field: 'fact_id' },
            },
          );
        }
        let fact = facts[0]!;
        if (input.new_value !== undefined) {
          fact = await memory.facts.correct(
            user,
            fact.id,
            { value: input.new_value, ...(input.new_text === undefined ? {} : { text: input.new_text }) },
            signalOf(context),
          );
        }
        if (input.expires_at !== undefined)
          fact = await memory.facts.expire(user, fact.id, input.expires_at, signalOf(context));
        return {
          content: [{ type: 'text', text: `Now [${fact.id}] ${describeFact(fact)}` }],
          structuredContent: { fact: { ...fact } },
        };
      },
    },
  ];
  const { memoryTool } = memory;
  const schema = memoryToolInputSchema as { properties: Record<string, unknown>; [key: string]: unknown };
  tools.push({
    name: memoryTool.definition.name,
    description: memoryTool.definition.description,
    inputSchema: {
      ...schema,
      properties: {
        ...schema.properties,
        user_id: {
          type: 'string',
          description: "The user whose memory directory to use; default: the server's default user.",
        },
      },
    },
    async run(args, context) {
      const { user_id: userId, ...input } = parseWith(memoryUserInput, args, 'arguments');
      return text(await memoryTool.run(userOf(context, userId), input, signalOf(context)));
    },
  });
  return tools;
}

/** `subject.attribute = value (since …, until …, expires …): "statement"`: a fact as the tools show it. */
function describeFact(fact: Fact): string {
  const times = [
    `since ${fact.validFrom}`,
    ...(fact.validTo === undefined ? [] : [`until ${fact.validTo}`]),
    ...(fact.expiresAt === undefined ? [] : [`expires ${fact.expiresAt}`]),
  ];
  return `${fact.subject}.${fact.attribute} = ${fact.value} (${times.join(', ')}): "${fact.text}"`;
}

/**
 * The current facts a `forget` or `correct` call names: by id, or by attribute (and subject, and value).
 * `invalid_input` when it names neither, `not_found` when nothing current matches.
 */
async function selectFacts(
  memory: Memory,
  user: UserScope,
  input: {
    fact_id?: string | undefined;
    attribute?: string | undefined;
    subject?: string | undefined;
    value?: string | undefined;
  },
  options: { signal?: AbortSignal },
): Promise<Fact[]> {
  if (input.fact_id === undefined && input.attribute === undefined) {
    throw new MemoryError('invalid_input', 'name the fact by fact_id, or by attribute', {
      details: { field: 'fact_id' },
    });
  }
  const current = await memory.facts.list(
    user,
    input.attribute === undefined
      ? {}
      : { subject: input.subject ?? 'user', attribute: toAttributeKey(input.attribute) },
    options,
  );
  const matches = current.filter(
    (fact) =>
      (input.fact_id === undefined || fact.id === input.fact_id) &&
      (input.value === undefined || normalizeFactValue(fact.value) === normalizeFactValue(input.value)),
  );
  if (matches.length === 0)
    throw new MemoryError('not_found', 'no current fact of the user matches', {
      details: { field: input.fact_id === undefined ? 'attribute' : 'fact_id' },
    });
  return matches;
}

/** The places a tool call may name its user: the connection (`X-Mnemo-User`, `mnemo mcp --user`) and the call's `user_id`; they must agree. */
function callNamings(context: McpCallContext, userId: string | undefined): UserNaming[] {
  return [
    { where: 'the connection (X-Mnemo-User or mnemo mcp --user)', userId: context.namedUserId },
    { where: "the call's user_id", userId },
  ];
}

/** The user of a user-level call: the one named (connection or call), else `default` (core's `ownerOf`). */
function userOf(context: McpCallContext, userId: string | undefined): UserScope {
  return ownerOf(context.tenantId, callNamings(context, userId));
}

/** A conversation's scope: the user named (connection or call), else the conversation is its own user, as over REST. */
function conversationOf(context: McpCallContext, conversationId: string, userId: string | undefined): Scope {
  return resolveScope({ ...ownerOf(context.tenantId, callNamings(context, userId), conversationId), conversationId });
}

function signalOf(context: McpCallContext): { signal?: AbortSignal } {
  return context.signal === undefined ? {} : { signal: context.signal };
}

function toInputSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _dialect, ...jsonSchema } = z.toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>;
  return Object.freeze(jsonSchema);
}

function text(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }] };
}

function json(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }], structuredContent: value };
}
