import { isMemoryError, MemoryError, ownerOf, type Memory, type UserScope } from '@mnemo/core';
import { ErrorCode, McpError, type ReadResourceResult, type Resource } from '@modelcontextprotocol/sdk/types.js';
import type { McpErrorLog } from './mcp-tool-error.js';

/** URI of the resource that holds the user's current facts. */
export const factsResourceUri = 'mnemo://facts';

const memoriesPrefix = 'mnemo://memories/';

/** What `resources/list` and `resources/read` serve for one user: their memory files and their facts. */
export interface McpResources {
  list(user: UserScope, signal?: AbortSignal): Promise<Resource[]>;
  /** Throws an `McpError`: -32002 for a resource that does not exist, -32602 for a URI that is not one of mnemo's. */
  read(user: UserScope, uri: string, signal?: AbortSignal): Promise<ReadResourceResult>;
}

/**
 * The user's `/memories` files (`mnemo://memories/<path>`, as the memory tool shows them) and current
 * facts (`mnemo://facts`, JSON), read-only: a client lists what the model will find and reads it
 * without a tool call. Writes stay with the tools.
 */
export function createMcpResources(memory: Memory, log?: McpErrorLog): McpResources {
  return Object.freeze({
    async list(user: UserScope, signal?: AbortSignal): Promise<Resource[]> {
      return guard(log, async () => {
        const files = await memory.memoryFiles.list(user, signalOf(signal));
        return [
          {
            uri: factsResourceUri,
            name: 'facts',
            title: 'Facts about the user',
            description: 'The current facts mnemo holds about this user, as JSON.',
            mimeType: 'application/json',
          },
          ...files.map((file) => ({
            uri: uriOf(file.path),
            name: file.path,
            description: `Memory file, version ${file.version}, updated ${file.updatedAt}`,
            mimeType: mimeTypeOf(file.path),
            size: file.sizeBytes,
          })),
        ];
      });
    },
    async read(user: UserScope, uri: string, signal?: AbortSignal): Promise<ReadResourceResult> {
      return guard(log, async () => {
        if (uri === factsResourceUri) {
          const facts = await memory.facts.list(user, {}, signalOf(signal));
          return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify({ facts }, null, 2) }] };
        }
        const file = await memory.memoryFiles.get(user, pathOf(uri), signalOf(signal));
        if (file === undefined)
          throw new MemoryError('not_found', `no resource ${uri}: the memory file does not exist`, {
            details: { uri },
          });
        return { contents: [{ uri, mimeType: mimeTypeOf(file.path), text: file.content }] };
      });
    },
  });
}

/** The user of resource calls: the one the connection names, else `default` (core's `ownerOf`). */
export function resourceUser(tenantId: string, userId: string | undefined): UserScope {
  return ownerOf(tenantId, [{ where: 'the connection', userId }]);
}

function uriOf(path: string): string {
  return memoriesPrefix + path.slice('/memories/'.length).split('/').map(encodeURIComponent).join('/');
}

function pathOf(uri: string): string {
  if (!uri.startsWith(memoriesPrefix)) {
    throw new MemoryError(
      'invalid_input',
      `${JSON.stringify(uri)} is not a mnemo resource: the URIs are ${factsResourceUri} and ${memoriesPrefix}<path>`,
      { details: { uri } },
    );
  }
  try {
    return `/memories/${uri.slice(memoriesPrefix.length).split('/').map(decodeURIComponent).join('/')}`;
  } catch (error) {
    throw new MemoryError('invalid_input', `${JSON.stringify(uri)} is not a well-formed URI`, {
      cause: error,
      details: { uri },
    });
  }
}

function mimeTypeOf(path: string): string {
  return path.endsWith('.md') ? 'text/markdown' : path.endsWith('.json') ? 'application/json' : 'text/plain';
}

function signalOf(signal: AbortSignal | undefined): { signal?: AbortSignal } {
  return signal === undefined ? {} : { signal };
}

/** Protocol errors for resources (the tools report theirs as results): not_found -32002, bad input -32602, anything else -32603 without internals. */
async function guard<T>(log: McpErrorLog | undefined, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (isMemoryError(error, 'not_found')) throw new McpError(-32002, error.message, { uri: error.details?.uri });
    if (isMemoryError(error) && error.code !== 'storage_failed')
      throw new McpError(ErrorCode.InvalidParams, `${error.code}: ${error.message}`);
    log?.error({ err: error }, 'mcp: resource read failed');
    throw new McpError(ErrorCode.InternalError, 'internal error; the server log has the cause');
  }
}
