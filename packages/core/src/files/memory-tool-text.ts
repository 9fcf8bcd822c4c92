import { type MemoryFileInfo } from './memory-file.js';

/** A file's text as lines; a final newline is remembered apart, so editing never doubles or loses it. */
export interface MemoryFileLines {
  readonly lines: string[];
  readonly trailingNewline: boolean;
}

/** Splits file content into lines (`""` has none; `"a\n"` has one, with a trailing newline). */
export function splitMemoryLines(content: string): MemoryFileLines {
  if (content === '') return { lines: [], trailingNewline: false };
  const trailingNewline = content.endsWith('\n');
  return { lines: (trailingNewline ? content.slice(0, -1) : content).split('\n'), trailingNewline };
}

/** Joins lines back into file content; the inverse of {@link splitMemoryLines}. */
export function joinMemoryLines({ lines, trailingNewline }: MemoryFileLines): string {
  return lines.join('\n') + (trailingNewline && lines.length > 0 ? '\n' : '');
}

/** Numbers lines the way the memory tool shows them: the 1-based number right-aligned in 6 columns, a tab, the line. */
export function numberMemoryLines(lines: readonly string[], firstLineNumber: number): string {
  return lines.map((line, index) => `${String(firstLineNumber + index).padStart(6)}\t${line}`).join('\n');
}

/** A size for listings: bytes below 1 KiB, then KiB and MiB with one decimal (`812B`, `4.0K`, `1.2M`). */
export function formatMemorySize(bytes: number): string {
  if (bytes < 1024) return `${bytes}B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}K`;
  return `${(bytes / (1024 * 1024)).toFixed(1)}M`;
}

/**
 * Lists a directory up to two levels below it: every file and sub-directory at depth 1 or 2, each
 * with its size (a directory's is the sum of everything under it, deeper levels included), one
 * `size<TAB>path` line each, directories ending with `/`, sorted by path. Hidden entries (a name
 * starting with `.`, such as the marker that keeps an empty directory) are left out, as the reference
 * tool leaves them out; the directories above them are listed.
 */
export function formatMemoryListing(directory: string, files: readonly MemoryFileInfo[]): string {
  const sizes = new Map<string, number>();
  let total = 0;
  let count = 0;
  for (const file of files) {
    const segments = file.path.slice(directory.length + 1).split('/');
    const hiddenAt = segments.findIndex((segment) => segment.startsWith('.'));
    if (hiddenAt === -1) {
      total += file.sizeBytes;
      count += 1;
    }
    const deepest = hiddenAt === -1 ? segments.length : hiddenAt;
    for (let depth = 1; depth <= Math.min(2, deepest); depth += 1) {
      const isFile = depth === segments.length;
      const entry = `${directory}/${segments.slice(0, depth).join('/')}${isFile ? '' : '/'}`;
      sizes.set(entry, (sizes.get(entry) ?? 0) + (hiddenAt === -1 ? file.sizeBytes : 0));
    }
  }
  const entries = [...sizes.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
  const header =
    entries.length === 0
      ? `${directory} is empty.`
      : `${directory}: ${count} file${count === 1 ? '' : 's'}, ${formatMemorySize(total)}; entries up to 2 levels deep (directories end with /):`;
  return [header, ...entries.map(([path, size]) => `${formatMemorySize(size)}\t${path}`)].join('\n');
}
