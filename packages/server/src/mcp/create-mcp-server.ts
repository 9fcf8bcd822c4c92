import { MemoryError } from '@mnemo/core';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { serverVersion } from '../operations/operations-routes.js';
import { resourceUser, type McpResources } from './mcp-resources.js';
import { toMcpToolError, type McpErrorLog } from './mcp-tool-error.js';
import type { McpTool } from './mcp-tools.js';

/** Options of {@link createMcpServer}. */
export interface McpServerOptions {
  readonly tools: readonly McpTool[];
  /** Every call of this server acts for this tenant. */
  readonly tenantId: string;
  /**
   * The user the connection names, if any: the user of the resources and of calls that name none (else
   * `default`, and a conversation named without a user is its own user).
   */
  readonly namedUserId?: string;
  /** `resources/list` and `resources/read` (the user's memory files and facts); without them the server offers tools only. */
  readonly resources?: McpResources;
  readonly log?: McpErrorLog;
}

const instructions =
  "mnemo is this user's long-term memory. Use `remember` to store messages, `get_context` to get what to send a model for a " +
  'conversation, `recall` to find past messages, `list_facts` for what is known about the user, and `memory` for your own notes ' +
  'in the /memories directory. The memory files and the facts are also resources (mnemo://memories/…, mnemo://facts).';

/**
 * An MCP server (one per connection or, over HTTP, per request) serving mnemo's tools for one tenant.
 * It is the SDK's low-level `Server` on purpose: the tools' JSON Schemas are served exactly as mnemo
 * exports them (the memory tool's is the one a library user hands any model), and every failure,
 * invalid arguments included, goes through the one mapping {@link toMcpToolError}.
 */
export function createMcpServer(options: McpServerOptions): Server {
  const { resources } = options;
  const server = new Server(
    { name: 'mnemo', version: serverVersion },
    { capabilities: { tools: {}, ...(resources === undefined ? {} : { resources: {} }) }, instructions },
  );
  const byName = new Map(options.tools.map((tool) => [tool.name, tool]));
  const listed: Tool[] = options.tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema as Tool['inputSchema'],
  }));

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    try {
      const tool = byName.get(request.params.name);
      if (tool === undefined) {
        throw new MemoryError(
          'not_found',
          `no tool named ${JSON.stringify(request.params.name)}; the tools are ${[...byName.keys()].join(', ')}`,
        );
      }
      return await tool.run(request.params.arguments ?? {}, {
        tenantId: options.tenantId,
        ...(options.namedUserId === undefined ? {} : { namedUserId: options.namedUserId }),
        signal: extra.signal,
      });
    } catch (error) {
      return toMcpToolError(error, options.log);
    }
  });
  if (resources !== undefined) {
    const user = resourceUser(options.tenantId, options.namedUserId);
    server.setRequestHandler(ListResourcesRequestSchema, async (_request, extra) => ({
      resources: await resources.list(user, extra.signal),
    }));
    server.setRequestHandler(ReadResourceRequestSchema, (request, extra) =>
      resources.read(user, request.params.uri, extra.signal),
    );
  }
  return server;
}
