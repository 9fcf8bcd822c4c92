import type { MemoryFile, MemoryFileInfo } from '../files/memory-file.js';
import type { ToIsoTime } from './knowledge-rows.js';

/** A `memory_files` row as every SQL adapter reads it; a listing selects `size_bytes` instead of `content`. See `MessageRow`. */
export interface MemoryFileRow {
  readonly tenant_id: string;
  readonly user_id: string;
  readonly path: string;
  readonly content?: string;
  readonly size_bytes?: unknown;
  readonly version: unknown;
  readonly created_at: unknown;
  readonly updated_at: unknown;
}

/** Maps a `memory_files` row to a {@link MemoryFile} (content `''` when the row was read without it). */
export function memoryFileFromRow(row: MemoryFileRow, toIso: ToIsoTime): MemoryFile {
  return {
    tenantId: row.tenant_id,
    userId: row.user_id,
    path: row.path,
    content: row.content ?? '',
    version: Number(row.version),
    createdAt: toIso(row.created_at),
    updatedAt: toIso(row.updated_at),
  };
}

/** Maps a listing's `memory_files` row (with `size_bytes`) to a {@link MemoryFileInfo}. */
export function memoryFileInfoFromRow(row: MemoryFileRow, toIso: ToIsoTime): MemoryFileInfo {
  const { content: _content, ...info } = memoryFileFromRow(row, toIso);
  return { ...info, sizeBytes: Number(row.size_bytes ?? 0) };
}
