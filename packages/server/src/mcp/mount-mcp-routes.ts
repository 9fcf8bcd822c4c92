import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { ServerApp, ServerDeps } from '../app/server-deps.js';
import { namedUserId, userHeader } from '../resource-api/request-scope.js';
import { createMcpServer } from './create-mcp-server.js';
import { createMcpResources } from './mcp-resources.js';
import { createMcpTools } from './mcp-tools.js';

/** The path MCP clients connect to (streamable HTTP). */
export const mcpPath = '/mcp';

/**
 * Mounts MCP over streamable HTTP at `/mcp`, stateless: every POST gets its own MCP server and
 * transport, acting for the tenant of the request's API key (set by the auth middleware), with the
 * `X-Mnemo-User` header's user for calls that name no `user_id` (without one: a conversation is its own
 * user, as over REST, and user-level calls and the resources act for `default`). Answers are JSON
 * (no server-initiated streams), so GET and DELETE get 405. The `memory` tool is the engine's
 * (`memory.memoryTool`, its caps set by `createMemory({ memoryToolLimits })`).
 */
export function mountMcpRoutes(app: ServerApp, deps: ServerDeps): void {
  const tools = createMcpTools({ memory: deps.memory });
  const resources = createMcpResources(deps.memory, deps.logger);

  deps.routes.add({
    method: 'post',
    path: mcpPath,
    summary: 'Model Context Protocol over streamable HTTP (stateless, JSON answers)',
    description: `Tools: ${tools.map((tool) => tool.name).join(', ')}; resources: the user's memory files and facts. Calls act for the API key's tenant and the ${userHeader} user unless a call names user_id; a conversation named without either is its own user, as over REST.`,
    tags: ['MCP'],
    responses: { 200: { description: 'a JSON-RPC response' }, 202: { description: 'a notification was accepted' } },
  });

  app.post(mcpPath, async (c) => {
    const named = namedUserId(c);
    const server = createMcpServer({
      tools,
      resources,
      tenantId: c.get('tenantId'),
      ...(named === undefined ? {} : { namedUserId: named }),
      log: c.get('logger') ?? deps.logger,
    });
    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
    await server.connect(transport);
    try {
      return await transport.handleRequest(c.req.raw);
    } finally {
      // The answer is complete JSON by now; the per-request server holds nothing worth keeping.
      await server.close();
    }
  });
  app.on(['GET', 'DELETE'], mcpPath, (c) =>
    c.json(
      {
        jsonrpc: '2.0',
        error: {
          code: -32000,
          message: 'Method not allowed: this MCP endpoint is stateless; send JSON-RPC requests with POST.',
        },
        id: null,
      },
      405,
      { Allow: 'POST' },
    ),
  );
}
