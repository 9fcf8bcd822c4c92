import { accessSync, constants, existsSync, statfsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** Free space below which the disk of a SQLite file counts as full: a few appends need a few pages each. */
export const minFreeDiskBytes = 1024 * 1024;

/** Bytes an unprivileged process may still write on the file system holding `path`; `undefined` when it cannot be read. */
export function freeDiskBytes(path: string): number | undefined {
  try {
    const stats = statfsSync(dirname(resolve(path)));
    return Number(stats.bavail) * Number(stats.bsize);
  } catch {
    return undefined;
  }
}

/** True when the file system holding `path` has less than {@link minFreeDiskBytes} left. */
export function isDiskFull(path: string): boolean {
  const free = freeDiskBytes(path);
  return free !== undefined && free < minFreeDiskBytes;
}

/** False when the database file or its WAL exists and this process may not write it (`access(W_OK)`: permissions, an immutable flag, a read-only mount). */
export function isWritableFile(path: string): boolean {
  for (const file of [path, `${path}-wal`]) {
    if (!existsSync(file)) continue;
    try {
      accessSync(file, constants.W_OK);
    } catch {
      return false;
    }
  }
  return true;
}
