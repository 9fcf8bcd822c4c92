import { MemoryError } from '../errors/memory-error.js';

/** A file of a user's memory directory (the Anthropic-style memory tool's `/memories`), kept in the store. */
export interface MemoryFile {
  readonly tenantId: string;
  readonly userId: string;
  /** Normalized absolute path under `/memories`, e.g. `/memories/trips/june.md`. */
  readonly path: string;
  readonly content: string;
  /** 1 on create, +1 on every write: the optimistic-concurrency token of {@link Store.putMemoryFile}. */
  readonly version: number;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** A file as listed: everything but the content, plus its size. */
export type MemoryFileInfo = Omit<MemoryFile, 'content'> & { readonly sizeBytes: number };

/** The root every memory path lives under. */
export const memoryRoot = '/memories';

/** Longest memory path accepted, in characters. */
export const maxMemoryPathLength = 256;

/**
 * Normalizes and checks a memory path: absolute under `/memories`, no `.` or `..` segments, no empty
 * segments, no backslashes or control characters, at most {@link maxMemoryPathLength} characters. A
 * trailing slash is dropped. Throws `invalid_input` (path traversal is refused, never resolved).
 */
export function normalizeMemoryPath(path: unknown): string {
  if (typeof path !== 'string' || path.length === 0) throw invalidPath(path, 'must be a non-empty string');
  if (path.length > maxMemoryPathLength) throw invalidPath(path, `must be at most ${maxMemoryPathLength} characters`);
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  if (/[\u0000-\u001f\u007f\\]/.test(path))
    throw invalidPath(path, 'must not contain control characters or backslashes');
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  if (trimmed !== memoryRoot && !trimmed.startsWith(`${memoryRoot}/`))
    throw invalidPath(path, `must be ${memoryRoot} or under it`);
  const segments = trimmed.split('/').slice(1);
  if (segments.some((segment) => segment === '' || segment === '.' || segment === '..')) {
    throw invalidPath(path, 'must not contain empty, "." or ".." segments');
  }
  return trimmed;
}

/**
 * Name of the hidden, empty file that keeps an emptied directory listed (the store's directories are
 * implicit). The memory tool refuses it as a file name; listings leave it out.
 */
export const memoryDirectoryMarker = '.mnemo-directory';

/** True when a segment of `path` below the root starts with `.`: listings leave it out, as the reference memory tool does. */
export function isHiddenMemoryPath(path: string): boolean {
  return path
    .split('/')
    .slice(2)
    .some((segment) => segment.startsWith('.'));
}

/** True when `path` is `directory` itself or inside it. */
export function isWithinMemoryPath(path: string, directory: string): boolean {
  return path === directory || path.startsWith(`${directory}/`);
}

function invalidPath(path: unknown, problem: string): MemoryError {
  return new MemoryError('invalid_input', `memory path ${JSON.stringify(path)} ${problem}`, {
    details: { field: 'path' },
  });
}
