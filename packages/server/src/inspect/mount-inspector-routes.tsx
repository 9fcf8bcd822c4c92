import { readFileSync } from 'node:fs';
import {
  resolveScope,
  resolveUserScope,
  type Memory,
  type Message,
  type Scope,
  type UsageEntry,
  type UserScope,
} from '@mnemo/core';
import { contextPolicies } from '@mnemo/core';
import { z } from 'zod';
import type { ServerApp, ServerContext, ServerDeps, ServerRouteModule } from '../app/server-deps.js';
import { registerRoute } from '../openapi/route-spec.js';
import { conversationNotFound } from '../resource-api/request-scope.js';
import { BackgroundView } from './background-view.js';
import { ContextView } from './context-view.js';
import { ConversationView, type NamedRelation } from './conversation-view.js';
import { ConversationsView } from './conversations-view.js';
import { FactsView } from './facts-view.js';
import { InspectorPage } from './inspector-page.js';
import { inspectorStyle } from './inspector-style.js';
import { SavingsView } from './savings-view.js';
import { SummaryExpansionView } from './summary-view.js';

/** Messages per transcript page. */
export const transcriptPageSize = 200;
/** Most ledger entries the savings view reads. */
export const maxSavingsEntries = 20_000;
/** Price per million tokens the savings view starts with, in dollars. */
export const defaultPricePerMillion = 2.5;

// Nothing of the page comes from anywhere but this server, and nothing runs but its one script.
const contentSecurityPolicy =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
const pageHeaders = {
  'Content-Security-Policy': contentSecurityPolicy,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

// The client is compiled by packages/server/client/tsconfig.json into dist/inspect/client; this path
// resolves to it both from dist/inspect (the built package) and from src/inspect (tests run from source).
const clientScriptUrl = new URL('../../dist/inspect/client/inspector-client.js', import.meta.url);
let clientScript: string | undefined;

const html = z.object({});
const userParams = z.object({ userId: z.string() });
const conversationParams = z.object({ userId: z.string(), conversationId: z.string() });
const optionalText = z.string().max(1000).optional();
const optionalInteger = (min: number, max: number) => z.coerce.number().int().min(min).max(max).optional();

/**
 * Mounts the inspector: `GET /inspect` (the page), `/inspect/inspector.js` and `/inspect/inspector.css`,
 * served without a key since they hold no data, and the views under `/inspect/fragments/...`, which need
 * the key like every API route and read only the key's tenant, only through `Memory`.
 */
export const mountInspectorRoutes: ServerRouteModule = (app, deps) => {
  mountAssets(app, deps);
  mountListViews(app, deps);
  mountConversationViews(app, deps);
};

function mountAssets(app: ServerApp, { keyCount, routes }: ServerDeps): void {
  const spec = (path: string, summary: string, contentType: string) =>
    ({
      method: 'get',
      path,
      summary,
      tags: ['inspector'],
      public: true,
      responses: { 200: { description: summary, contentType } },
    }) as const;
  registerRoute(
    app,
    routes,
    spec('/inspect', 'The inspector page (no data: the page asks for a key and loads its views)', 'text/html'),
    (c) =>
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- Hono types an element as a string or a Promise; a synchronous component's element is a node whose toString renders it
      c.html(`<!doctype html>${(<InspectorPage keyRequired={keyCount > 0} />).toString()}`, 200, pageHeaders),
  );
  registerRoute(app, routes, spec('/inspect/inspector.js', "The inspector's script", 'text/javascript'), (c) => {
    clientScript ??= readFileSync(clientScriptUrl, 'utf8');
    return c.body(clientScript, 200, { ...pageHeaders, 'Content-Type': 'text/javascript; charset=utf-8' });
  });
  registerRoute(app, routes, spec('/inspect/inspector.css', "The inspector's stylesheet", 'text/css'), (c) =>
    c.body(inspectorStyle, 200, { ...pageHeaders, 'Content-Type': 'text/css; charset=utf-8' }),
  );
}

function fragment(path: string, summary: string) {
  return {
    method: 'get' as const,
    path: `/inspect/fragments${path}`,
    summary,
    tags: ['inspector'],
    responses: { 200: { description: 'an HTML fragment of the inspector', contentType: 'text/html' } },
  };
}

function user(c: ServerContext, userId: string): UserScope {
  return resolveUserScope({ tenantId: c.get('tenantId'), userId });
}

function conversation(c: ServerContext, userId: string, conversationId: string): Scope {
  return resolveScope({ tenantId: c.get('tenantId'), userId, conversationId });
}

function mountListViews(app: ServerApp, { memory, routes }: ServerDeps): void {
  registerRoute(
    app,
    routes,
    {
      ...fragment('/conversations', 'Inspector: conversations of the tenant'),
      query: z.object({ search: optionalText, user: optionalText, cursor: optionalText }),
    },
    async (c, { query }) => {
      const tenantId = c.get('tenantId');
      const page = await memory.listConversations(
        {
          tenantId,
          ...(query.user === undefined ? {} : { userId: query.user }),
          ...(query.search === undefined ? {} : { search: query.search }),
        },
        { limit: 50, ...(query.cursor === undefined ? {} : { cursor: query.cursor }) },
      );
      return c.html(<ConversationsView tenantId={tenantId} page={page} {...query} />, 200, pageHeaders);
    },
  );
  registerRoute(
    app,
    routes,
    { ...fragment('/background', 'Inspector: background jobs of the tenant'), query: html },
    async (c) => {
      const tenant = { tenantId: c.get('tenantId') };
      const [counts, failures] = await Promise.all([
        memory.jobs.countByKind(tenant),
        memory.jobs.listRecentFailures(tenant, { limit: 20 }),
      ]);
      return c.html(
        <BackgroundView tenantId={tenant.tenantId} counts={counts} failures={failures} now={Date.now()} />,
        200,
        pageHeaders,
      );
    },
  );
  registerRoute(
    app,
    routes,
    {
      ...fragment('/facts/{userId}', 'Inspector: facts of a user, current or as of a day, with history'),
      params: userParams,
      query: z.object({ asOf: z.iso.date().optional() }),
    },
    async (c, { params, query }) => {
      const owner = user(c, params.userId);
      const asOf = query.asOf === undefined ? undefined : `${query.asOf}T23:59:59.999Z`;
      const [current, history] = await Promise.all([
        memory.facts.list(owner, asOf === undefined ? {} : { asOf }),
        memory.facts.history(owner),
      ]);
      return c.html(
        <FactsView
          userId={owner.userId}
          current={current}
          history={history}
          {...(query.asOf === undefined ? {} : { asOfDay: query.asOf })}
        />,
        200,
        pageHeaders,
      );
    },
  );
  registerRoute(
    app,
    routes,
    {
      ...fragment('/summary/{userId}/{summaryId}', "Inspector: a summary's exact source messages, a page at a time"),
      params: z.object({ userId: z.string(), summaryId: z.string() }),
      query: z.object({
        offset: z.coerce
          .number<string>()
          .int()
          .min(0)
          .optional()
          .describe('the first source message shown, from 0 (default 0)'),
      }),
    },
    async (c, { params, query }) => {
      const expanded = await memory.expand(user(c, params.userId), params.summaryId);
      return c.html(<SummaryExpansionView expanded={expanded} offset={query.offset ?? 0} />, 200, pageHeaders);
    },
  );
}

function mountConversationViews(app: ServerApp, { memory, routes }: ServerDeps): void {
  registerRoute(
    app,
    routes,
    {
      ...fragment(
        '/conversation/{userId}/{conversationId}',
        'Inspector: a conversation with its summaries, knowledge and transcript',
      ),
      params: conversationParams,
      query: z.object({
        afterSeq: optionalInteger(0, Number.MAX_SAFE_INTEGER),
        seq: optionalInteger(1, Number.MAX_SAFE_INTEGER),
      }),
    },
    async (c, { params, query }) => {
      const scope = conversation(c, params.userId, params.conversationId);
      const stats = await memory.stats(scope);
      if (stats === undefined) throw conversationNotFound(scope);
      const afterSeq =
        query.seq !== undefined
          ? Math.floor((query.seq - 1) / transcriptPageSize) * transcriptPageSize
          : (query.afterSeq ?? Math.max(0, stats.messageCount - transcriptPageSize));
      const [messages, summaries, facts, relations] = await Promise.all([
        memory.listMessages(scope, { afterSeq, limit: transcriptPageSize }),
        memory.listSummaries(scope),
        memory.facts
          .history(scope)
          .then((all) => all.filter((fact) => fact.sourceConversationId === scope.conversationId)),
        relationsOf(memory, scope),
      ]);
      const focus = query.seq === undefined ? {} : { focusSeq: query.seq };
      return c.html(
        <ConversationView
          stats={stats}
          messages={messages}
          afterSeq={afterSeq}
          pageSize={transcriptPageSize}
          summaries={summaries}
          facts={facts}
          relations={relations}
          {...focus}
        />,
        200,
        pageHeaders,
      );
    },
  );
  registerRoute(
    app,
    routes,
    {
      ...fragment(
        '/context/{userId}/{conversationId}',
        'Inspector: the context the next request would carry (a preview, not recorded)',
      ),
      params: conversationParams,
      query: z.object({
        policy: z.enum(contextPolicies).default('hybrid'),
        maxTokens: z.coerce.number().int().min(1).max(10_000_000).default(2000),
        windowTurns: z.coerce.number().int().min(1).max(100_000).default(4),
        query: optionalText,
      }),
    },
    async (c, { params, query }) => {
      const scope = conversation(c, params.userId, params.conversationId);
      if ((await memory.stats(scope)) === undefined) throw conversationNotFound(scope);
      const settings = {
        policy: query.policy,
        maxTokens: query.maxTokens,
        windowTurns: query.windowTurns,
        ...(query.query === undefined ? {} : { query: query.query }),
      };
      const built = await memory.buildContext(scope, { ...settings, record: false });
      const [facts, recalled] = await Promise.all([
        memory.facts.list(scope),
        recalledMessages(memory, scope, built.report),
      ]);
      return c.html(
        <ContextView
          userId={scope.userId}
          conversationId={scope.conversationId}
          settings={settings}
          built={built}
          facts={new Map(facts.map((fact) => [fact.id, fact]))}
          recalled={recalled}
        />,
        200,
        pageHeaders,
      );
    },
  );
  registerRoute(
    app,
    routes,
    {
      ...fragment(
        '/savings/{userId}/{conversationId}',
        'Inspector: tokens sent against full history per request, from the usage ledger',
      ),
      params: conversationParams,
      query: z.object({ price: z.coerce.number().min(0).max(1_000_000).default(defaultPricePerMillion) }),
    },
    async (c, { params, query }) => {
      const scope = conversation(c, params.userId, params.conversationId);
      if ((await memory.stats(scope)) === undefined) throw conversationNotFound(scope);
      const { entries, cut } = await readLedger(memory, scope);
      return c.html(
        <SavingsView
          userId={scope.userId}
          conversationId={scope.conversationId}
          entries={entries}
          pricePerMillion={query.price}
          cut={cut}
        />,
        200,
        pageHeaders,
      );
    },
  );
}

async function readLedger(memory: Memory, scope: Scope): Promise<{ entries: UsageEntry[]; cut: boolean }> {
  const entries: UsageEntry[] = [];
  let cursor: string | undefined;
  do {
    const page = await memory.listUsage(scope, { limit: 1000, ...(cursor === undefined ? {} : { cursor }) });
    entries.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== undefined && entries.length < maxSavingsEntries);
  return { entries, cut: cursor !== undefined };
}

// Relations extracted from this conversation, with the names of the entities at both ends.
async function relationsOf(memory: Memory, scope: Scope): Promise<NamedRelation[]> {
  const entities = await memory.graph.entities(scope, { limit: 1000 });
  if (entities.length === 0) return [];
  const names = new Map(entities.map((entity) => [entity.id, entity.name]));
  const relations = await memory.graph.relations(scope, { entityIds: [...names.keys()], includeHistory: true });
  return relations
    .filter((relation) => relation.sourceConversationId === scope.conversationId)
    .map((relation) => ({
      relation,
      subject: names.get(relation.subjectId) ?? relation.subjectId,
      object: names.get(relation.objectId) ?? relation.objectId,
    }));
}

// The stored messages a hybrid context recalled (included or not), to show what each snippet says.
async function recalledMessages(
  memory: Memory,
  scope: Scope,
  report: {
    parts: readonly { items?: readonly { kind: string; conversationId?: string; seq?: number }[] }[];
    excludedItems: readonly { kind: string; conversationId?: string; seq?: number }[];
  },
): Promise<Map<string, Message>> {
  const items = [...report.parts.flatMap((part) => part.items ?? []), ...report.excludedItems].filter(
    (item) => item.kind === 'recalled',
  );
  const found = new Map<string, Message>();
  for (const item of items) {
    if (item.conversationId === undefined || item.seq === undefined) continue;
    const [message] = await memory.listMessages(
      { ...scope, conversationId: item.conversationId },
      { afterSeq: item.seq - 1, limit: 1 },
    );
    if (message !== undefined) found.set(message.id, message);
  }
  return found;
}
