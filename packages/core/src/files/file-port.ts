import type { UserScope } from '../messages/scope.js';
import type { PortCalls } from '../store/port.js';
import type { CallOptions, MemoryFileWrite } from '../store/store.js';
import type { MemoryFile, MemoryFileInfo } from './memory-file.js';

/** The memory tool's files. Part of the `Store` port; an adapter implements it as a `StorePart<FilePort>`. */
export interface FilePort {
  /** One memory file of a user, or `undefined`. Paths must be normalized (`normalizeMemoryPath`). */
  getMemoryFile(user: UserScope, path: string, options?: CallOptions): Promise<MemoryFile | undefined>;
  /** The user's files at `directory` or under it, by path, without content. */
  listMemoryFiles(user: UserScope, directory: string, options?: CallOptions): Promise<MemoryFileInfo[]>;
  /** Writes a file (version + 1); `conflict` when `expectedVersion` does not match what is stored. */
  putMemoryFile(user: UserScope, write: MemoryFileWrite, options?: CallOptions): Promise<MemoryFile>;
  /** Deletes the file at `path` and every file under it as a directory; returns how many. */
  deleteMemoryFiles(user: UserScope, path: string, options?: CallOptions): Promise<number>;
  /**
   * Moves the file at `from`, or every file under it as a directory, to `to`, in one transaction;
   * `not_found` when nothing is at `from`, `conflict` when anything already is at `to`. Returns how many moved.
   */
  renameMemoryFiles(user: UserScope, from: string, to: string, now: string, options?: CallOptions): Promise<number>;
}

/** What each method of {@link FilePort} does, in the words of an error, and the index of its call options. */
export const filePortCalls: PortCalls<FilePort> = {
  getMemoryFile: ['reading a memory file', 2],
  listMemoryFiles: ['listing memory files', 2],
  putMemoryFile: ['writing a memory file', 2],
  deleteMemoryFiles: ['deleting memory files', 2],
  renameMemoryFiles: ['renaming memory files', 4],
};
