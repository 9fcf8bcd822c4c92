import { statfsSync } from 'node:fs';
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
