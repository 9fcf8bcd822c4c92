import { MemoryError } from '../errors/memory-error.js';
import { normalizeMemoryPath } from './memory-file.js';

/** Stores accept only normalized paths: a caller that skipped `normalizeMemoryPath` gets `invalid_input`, never a traversal. */
export function checkStoredMemoryPath(path: string): string {
  const normalized = normalizeMemoryPath(path);
  if (normalized !== path) {
    throw new MemoryError(
      'invalid_input',
      `memory path ${JSON.stringify(path)} is not normalized (expected ${JSON.stringify(normalized)})`,
      {
        details: { field: 'path' },
      },
    );
  }
  return path;
}

/** The error of a memory-file write whose expected version is not the stored one. */
export function memoryFileConflict(path: string, expected: number, actual: number): MemoryError {
  const problem =
    expected === 0 ? 'already exists' : actual === 0 ? 'does not exist' : `is at version ${actual}, not ${expected}`;
  return new MemoryError('conflict', `memory file ${path} ${problem}`, {
    details: { path, expectedVersion: expected, version: actual },
  });
}
