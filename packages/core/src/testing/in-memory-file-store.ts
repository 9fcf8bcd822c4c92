import { MemoryError } from '../errors/memory-error.js';
import { isWithinMemoryPath, type MemoryFile, type MemoryFileInfo } from '../files/memory-file.js';
import type { UserScope } from '../messages/scope.js';
import type { MemoryFileWrite } from '../store/store.js';
import { checkStoredMemoryPath, memoryFileConflict } from '../files/memory-file-rules.js';

/** The memory files of {@link InMemoryStore}. */
export class InMemoryFileStore {
  readonly #files = new Map<string, MemoryFile>();

  /** Every file. */
  all(): MemoryFile[] {
    return [...this.#files.values()];
  }

  /** Replaces every file (an import). */
  replaceAll(files: readonly MemoryFile[]): void {
    this.#files.clear();
    for (const file of files) this.#files.set(fileKey(file, file.path), file);
  }

  get(user: UserScope, path: string): MemoryFile | undefined {
    return this.#files.get(fileKey(user, checkStoredMemoryPath(path)));
  }

  list(user: UserScope, directory: string): MemoryFileInfo[] {
    const root = checkStoredMemoryPath(directory);
    return this.#ofUser(user)
      .filter((file) => isWithinMemoryPath(file.path, root))
      .sort((a, b) => (a.path < b.path ? -1 : 1))
      .map(({ content, ...info }) => ({ ...info, sizeBytes: Buffer.byteLength(content, 'utf8') }));
  }

  put(user: UserScope, write: MemoryFileWrite): MemoryFile {
    const path = checkStoredMemoryPath(write.path);
    const existing = this.#files.get(fileKey(user, path));
    if (write.expectedVersion !== undefined && (existing?.version ?? 0) !== write.expectedVersion) {
      throw memoryFileConflict(path, write.expectedVersion, existing?.version ?? 0);
    }
    const file: MemoryFile = {
      ...user,
      path,
      content: write.content,
      version: (existing?.version ?? 0) + 1,
      createdAt: existing?.createdAt ?? write.now,
      updatedAt: write.now,
    };
    this.#files.set(fileKey(user, path), file);
    return file;
  }

  delete(user: UserScope, path: string): number {
    const root = checkStoredMemoryPath(path);
    const doomed = this.#ofUser(user).filter((file) => isWithinMemoryPath(file.path, root));
    for (const file of doomed) this.#files.delete(fileKey(user, file.path));
    return doomed.length;
  }

  rename(user: UserScope, from: string, to: string, now: string): number {
    const source = checkStoredMemoryPath(from);
    const target = checkStoredMemoryPath(to);
    const moving = this.#ofUser(user).filter((file) => isWithinMemoryPath(file.path, source));
    if (moving.length === 0) throw new MemoryError('not_found', `nothing at ${source}`, { details: { path: source } });
    if (isWithinMemoryPath(target, source))
      throw new MemoryError('invalid_input', `cannot move ${source} into itself`, { details: { path: target } });
    if (this.#ofUser(user).some((file) => isWithinMemoryPath(file.path, target))) {
      throw new MemoryError('conflict', `${target} already exists`, { details: { path: target } });
    }
    for (const file of moving) {
      this.#files.delete(fileKey(user, file.path));
      const path = target + file.path.slice(source.length);
      this.#files.set(fileKey(user, path), { ...file, path, version: file.version + 1, updatedAt: now });
    }
    return moving.length;
  }

  deleteUser(user: UserScope): void {
    for (const file of this.#ofUser(user)) this.#files.delete(fileKey(user, file.path));
  }

  #ofUser(user: UserScope): MemoryFile[] {
    return [...this.#files.values()].filter((file) => file.tenantId === user.tenantId && file.userId === user.userId);
  }
}

function fileKey(user: UserScope, path: string): string {
  return JSON.stringify([user.tenantId, user.userId, path]);
}
