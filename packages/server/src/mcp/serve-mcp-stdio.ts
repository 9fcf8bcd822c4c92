import type { Readable, Writable } from 'node:stream';
import { resolveUserScope, type Memory } from '@mnemo/core';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createMcpServer } from './create-mcp-server.js';
import { createMcpResources } from './mcp-resources.js';
import type { McpErrorLog } from './mcp-tool-error.js';
import { createMcpTools } from './mcp-tools.js';

/** Options of {@link serveMcpOverStdio}. */
export interface McpStdioOptions {
  readonly memory: Memory;
  /** Default `default`. */
  readonly tenantId?: string;
  /** The user of calls that name no `user_id`; without one a conversation is its own user (as over REST) and the rest acts for `default`. */
  readonly userId?: string;
  /** Where JSON-RPC arrives and goes: default the process's stdin and stdout (stdout then carries nothing else). */
  readonly stdin?: Readable;
  readonly stdout?: Writable;
  /** Where failures that are the server's fault are reported (never stdout). */
  readonly log?: McpErrorLog;
}

/** A running stdio MCP server. */
export interface McpStdioServer {
  /** Resolves when the client closes the connection (stdin ends) or {@link McpStdioServer.close} is called. */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

/**
 * Serves mnemo's MCP tools over stdio for one tenant (the `mnemo mcp` command): newline-delimited
 * JSON-RPC on stdin and stdout. Throws `invalid_input` for a bad tenant or user id.
 */
export async function serveMcpOverStdio(options: McpStdioOptions): Promise<McpStdioServer> {
  const { tenantId, userId } = resolveUserScope({
    ...(options.tenantId === undefined ? {} : { tenantId: options.tenantId }),
    ...(options.userId === undefined ? {} : { userId: options.userId }),
  });
  const server = createMcpServer({
    tools: createMcpTools({ memory: options.memory }),
    resources: createMcpResources(options.memory, options.log),
    tenantId,
    ...(options.userId === undefined ? {} : { namedUserId: userId }),
    ...(options.log === undefined ? {} : { log: options.log }),
  });
  const transport = new StdioServerTransport(options.stdin, options.stdout);
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  // The SDK's stdio transport does not notice the end of stdin by itself; a client that goes away must stop the server.
  const stdin = options.stdin ?? process.stdin;
  const onEnd = () => void server.close();
  stdin.once('end', onEnd);
  await server.connect(transport);
  return {
    closed: closed.finally(() => stdin.off('end', onEnd)),
    close: () => server.close(),
  };
}
