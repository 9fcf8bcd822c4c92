import { resolveUserScope, type UserScopeInput } from '../messages/scope.js';
import type { CallOptions, Store } from '../store/store.js';
import {
  isHiddenMemoryPath,
  memoryRoot,
  normalizeMemoryPath,
  type MemoryFile,
  type MemoryFileInfo,
} from './memory-file.js';

/** Read access to each user's `/memories` directory, for clients that show it (MCP resources, inspectors). */
export interface MemoryFileReader {
  /** Every file of the user, sorted by path; hidden ones (a name starting with `.`) left out, as the memory tool lists them. */
  list(user: UserScopeInput, options?: CallOptions): Promise<MemoryFileInfo[]>;
  /** One file; `undefined` when absent. `invalid_input` for a path outside `/memories` or with traversal. */
  get(user: UserScopeInput, path: string, options?: CallOptions): Promise<MemoryFile | undefined>;
}

/** The reader over `store`'s memory files. */
export function createMemoryFileReader(store: Store): MemoryFileReader {
  return Object.freeze({
    list: async (user: UserScopeInput, options?: CallOptions) =>
      (await store.listMemoryFiles(resolveUserScope(user), memoryRoot, options)).filter(
        (file) => !isHiddenMemoryPath(file.path),
      ),
    get: (user: UserScopeInput, path: string, options?: CallOptions) =>
      store.getMemoryFile(resolveUserScope(user), normalizeMemoryPath(path), options),
  });
}
