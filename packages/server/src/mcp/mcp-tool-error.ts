import { isMemoryError } from '@mnemo/core';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** Where {@link toMcpToolError} reports failures that are the server's fault, not the caller's. */
export interface McpErrorLog {
  error(fields: Record<string, unknown>, message: string): void;
}

/**
 * The one mapping from a thrown value to an MCP tool result: `isError: true` with `<code>: <message>`,
 * so the model reads what went wrong and can correct its call. A MemoryError keeps its code and message;
 * a storage failure or an unexpected error (a bug) is logged and reported without its internals
 * (driver text, paths), as the HTTP edge does.
 */
export function toMcpToolError(error: unknown, log?: McpErrorLog): CallToolResult {
  if (isMemoryError(error) && error.code !== 'storage_failed') {
    return { isError: true, content: [{ type: 'text', text: `${error.code}: ${error.message}` }] };
  }
  log?.error({ err: error }, 'mcp: tool call failed');
  const code = isMemoryError(error) ? 'storage_failed' : 'internal';
  const what = code === 'storage_failed' ? 'the store failed' : 'internal error';
  return { isError: true, content: [{ type: 'text', text: `${code}: ${what}; the server log has the cause` }] };
}
