import { isMemoryError, MemoryError } from '../errors/memory-error.js';
import type { UserScope } from '../messages/scope.js';
import type { CallOptions, MemoryFileWrite, Store } from '../store/store.js';
import {
  isHiddenMemoryPath,
  isWithinMemoryPath,
  memoryDirectoryMarker,
  memoryRoot,
  normalizeMemoryPath,
  type MemoryFile,
  type MemoryFileInfo,
} from './memory-file.js';
import {
  memoryToolDescription,
  memoryToolInputSchema,
  memoryToolName,
  parseMemoryCommand,
  type JsonSchema,
  type MemoryCommand,
} from './memory-tool-schema.js';
import { formatMemoryListing, joinMemoryLines, numberMemoryLines, splitMemoryLines } from './memory-tool-text.js';

/** Caps on a user's memory directory. */
export interface MemoryToolLimits {
  /** Largest file, in UTF-8 bytes. Default 102,400 (100 KB). */
  readonly maxFileBytes: number;
  /** Most files one user may hold. Default 1,000. */
  readonly maxFilesPerUser: number;
}

/** The caps used when {@link createMemoryTool} is given none. */
export const defaultMemoryToolLimits: MemoryToolLimits = Object.freeze({
  maxFileBytes: 100 * 1024,
  maxFilesPerUser: 1000,
});

/** Options of {@link createMemoryTool}. Only `store` is required. */
export interface MemoryToolOptions {
  readonly store: Store;
  /** Missing fields take {@link defaultMemoryToolLimits}. */
  readonly limits?: Partial<MemoryToolLimits>;
  /** Clock for file times, in epoch ms; default `Date.now`. */
  readonly now?: () => number;
}

/** What to hand a tool-calling model: name, description and the JSON Schema of the input. */
export interface MemoryToolDefinition {
  readonly name: typeof memoryToolName;
  readonly description: string;
  readonly inputSchema: JsonSchema;
}

/** Anthropic-style memory tool over a user's `/memories` directory in the store. */
export interface MemoryTool {
  readonly definition: MemoryToolDefinition;
  /**
   * Runs one tool call for `user` and returns the text to give back to the model. Throws a
   * `MemoryError`: `invalid_input` (malformed input, path traversal, `old_str` not found or not unique,
   * a line out of range, a file over the size cap, the reserved directory-marker name), `not_found`,
   * `conflict` (`create` over an existing file, a taken path, or a concurrent writer won twice),
   * `budget_exceeded` (the user's file cap), or a store error.
   */
  run(user: UserScope, input: unknown, options?: CallOptions): Promise<string>;
}

// What a versioned write returns when another writer got there first.
const lostRace = Symbol('lost race');

// Lines of context shown around an edit, so the model sees the result without another view.
const snippetContextLines = 4;

/** Creates the memory tool; no I/O beyond the store, and every write is a compare-and-set on the file's version. */
export function createMemoryTool(options: MemoryToolOptions): MemoryTool {
  const limits: MemoryToolLimits = Object.freeze({ ...defaultMemoryToolLimits, ...options.limits });
  const files = new MemoryDirectory(options.store, limits, options.now ?? Date.now);
  return Object.freeze({
    definition: Object.freeze({
      name: memoryToolName,
      description: memoryToolDescription,
      inputSchema: memoryToolInputSchema,
    }),
    run: (user: UserScope, input: unknown, callOptions: CallOptions = {}) =>
      files.run(user, parseMemoryCommand(input), callOptions),
  });
}

class MemoryDirectory {
  readonly #store: Store;
  readonly #limits: MemoryToolLimits;
  readonly #now: () => number;

  constructor(store: Store, limits: MemoryToolLimits, now: () => number) {
    this.#store = store;
    this.#limits = limits;
    this.#now = now;
  }

  async run(user: UserScope, command: MemoryCommand, options: CallOptions): Promise<string> {
    switch (command.command) {
      case 'view':
        return this.#view(user, normalizeMemoryPath(command.path), command.view_range, options);
      case 'create':
        return this.#create(user, writablePath(command.path), command.file_text, options);
      case 'str_replace':
        return this.#replace(user, writablePath(command.path), command.old_str, command.new_str, options);
      case 'insert':
        return this.#insert(user, writablePath(command.path), command.insert_line, command.insert_text, options);
      case 'delete':
        return this.#delete(user, writablePath(command.path), options);
      case 'rename':
        return this.#rename(user, writablePath(command.old_path), writablePath(command.new_path), options);
    }
  }

  async #view(
    user: UserScope,
    path: string,
    range: readonly [number, number] | undefined,
    options: CallOptions,
  ): Promise<string> {
    const file = path === memoryRoot ? undefined : await this.#store.getMemoryFile(user, path, options);
    if (file === undefined) {
      if (range !== undefined)
        throw new MemoryError('invalid_input', `view_range applies to files; ${path} is not a file`, {
          details: { field: 'view_range', path },
        });
      const listed = await this.#store.listMemoryFiles(user, path, options);
      if (listed.length === 0 && path !== memoryRoot) throw notFound(path);
      return formatMemoryListing(path, listed);
    }
    const { lines } = splitMemoryLines(file.content);
    if (lines.length === 0) return `${path} (version ${file.version}) is empty.`;
    const [first, last] = range === undefined ? [1, lines.length] : checkViewRange(path, range, lines.length);
    return `${path} (version ${file.version}), lines ${first}-${last} of ${lines.length}:\n${numberMemoryLines(lines.slice(first - 1, last), first)}`;
  }

  async #create(user: UserScope, path: string, text: string, options: CallOptions): Promise<string> {
    this.#checkSize(path, text);
    // A create never overwrites (as Anthropic's reference tool): a careless create would lose a file the
    // model did not re-read. A racing create that wins makes this one's write conflict, and the retry refuses.
    await this.#retryOnConflict(path, async () => {
      const existing = await this.#store.getMemoryFile(user, path, options);
      if (existing !== undefined) throw alreadyExists(path, existing.version);
      this.#checkNewFile(path, await this.#store.listMemoryFiles(user, memoryRoot, options));
      return this.#put(user, { path, content: text, now: this.#timestamp(), expectedVersion: 0 }, options);
    });
    return `Created ${path} (${Buffer.byteLength(text, 'utf8')} bytes).`;
  }

  async #replace(
    user: UserScope,
    path: string,
    oldText: string,
    newText: string,
    options: CallOptions,
  ): Promise<string> {
    let editedAt = 0;
    const written = await this.#edit(user, path, options, (content) => {
      const positions = occurrences(content, oldText);
      if (positions.length === 0) {
        throw new MemoryError(
          'invalid_input',
          `old_str does not occur in ${path}; nothing was replaced (it must match exactly, whitespace included)`,
          {
            details: { field: 'old_str', path, occurrences: 0 },
          },
        );
      }
      if (positions.length > 1) {
        const lineNumbers = positions.map((position) => lineOf(content, position));
        throw new MemoryError(
          'invalid_input',
          `old_str occurs ${positions.length} times in ${path} (lines ${lineNumbers.join(', ')}); nothing was replaced: include more surrounding text so it occurs exactly once`,
          {
            details: { field: 'old_str', path, occurrences: positions.length, lines: lineNumbers },
          },
        );
      }
      editedAt = lineOf(content, positions[0]!);
      return content.slice(0, positions[0]) + newText + content.slice(positions[0]! + oldText.length);
    });
    const changedLines = Math.max(1, splitMemoryLines(newText).lines.length);
    return `Edited ${path} (now version ${written.version}).\n${snippet(written.content, editedAt, editedAt + changedLines - 1)}`;
  }

  async #insert(user: UserScope, path: string, afterLine: number, text: string, options: CallOptions): Promise<string> {
    const inserted = splitMemoryLines(text).lines;
    const written = await this.#edit(user, path, options, (content) => {
      const file = splitMemoryLines(content);
      if (afterLine > file.lines.length) {
        throw new MemoryError(
          'invalid_input',
          `insert_line ${afterLine} is past the end of ${path}, which has ${file.lines.length} lines (use 0 to ${file.lines.length})`,
          {
            details: { field: 'insert_line', path, lineCount: file.lines.length },
          },
        );
      }
      const lines = [
        ...file.lines.slice(0, afterLine),
        ...(inserted.length === 0 ? [''] : inserted),
        ...file.lines.slice(afterLine),
      ];
      return joinMemoryLines({
        lines,
        trailingNewline: file.trailingNewline || (file.lines.length === 0 && text.endsWith('\n')),
      });
    });
    const first = afterLine + 1;
    return `Inserted ${Math.max(1, inserted.length)} line(s) into ${path} after line ${afterLine} (now version ${written.version}).\n${snippet(written.content, first, first + Math.max(1, inserted.length) - 1)}`;
  }

  async #delete(user: UserScope, path: string, options: CallOptions): Promise<string> {
    const file = await this.#store.getMemoryFile(user, path, options);
    const visible =
      file === undefined
        ? (await this.#store.listMemoryFiles(user, path, options)).filter((info) => !isHiddenMemoryPath(info.path))
            .length
        : 1;
    const deleted = await this.#store.deleteMemoryFiles(user, path, options);
    if (deleted === 0) throw notFound(path);
    await this.#keepDirectory(user, parentOf(path), options);
    return file !== undefined
      ? `Deleted ${path}.`
      : `Deleted the directory ${path} (${visible} file${visible === 1 ? '' : 's'}).`;
  }

  async #rename(user: UserScope, from: string, to: string, options: CallOptions): Promise<string> {
    if (from === to)
      throw new MemoryError('invalid_input', `old_path and new_path are both ${from}`, {
        details: { field: 'new_path', path: to },
      });
    const all = await this.#store.listMemoryFiles(user, memoryRoot, options);
    const blocker = all.find((file) => file.path !== from && isWithinMemoryPath(to, file.path) && to !== file.path);
    if (blocker !== undefined)
      throw new MemoryError('conflict', `${blocker.path} is a file, so nothing can be moved under it`, {
        details: { path: to },
      });
    const moved = await this.#store.renameMemoryFiles(user, from, to, this.#timestamp(), options);
    await this.#keepDirectory(user, parentOf(from), options);
    return `Renamed ${from} to ${to}${moved === 1 ? '' : ` (${moved} files)`}.`;
  }

  /**
   * Keeps `directory` listed after its last file went (a delete or a rename out of it), as a directory
   * stays on the reference's file system: directories are implicit in the store, so an empty one holds
   * a hidden, empty marker file that listings leave out.
   */
  async #keepDirectory(user: UserScope, directory: string, options: CallOptions): Promise<void> {
    if (directory === memoryRoot) return;
    if ((await this.#store.listMemoryFiles(user, directory, options)).length > 0) return;
    const marker = `${directory}/${memoryDirectoryMarker}`;
    try {
      await this.#store.putMemoryFile(
        user,
        { path: marker, content: '', now: this.#timestamp(), expectedVersion: 0 },
        options,
      );
    } catch (error) {
      // A concurrent writer put a file (or the marker) there first: the directory is listed either way.
      if (!isMemoryError(error, 'conflict')) throw error;
    }
  }

  /** Read, transform, write back over the read version; a concurrent writer makes the write conflict, and the edit is redone once on the fresh content. */
  async #edit(
    user: UserScope,
    path: string,
    options: CallOptions,
    transform: (content: string) => string,
  ): Promise<MemoryFile> {
    return this.#retryOnConflict(path, async () => {
      const file = await this.#store.getMemoryFile(user, path, options);
      if (file === undefined) {
        const under = await this.#store.listMemoryFiles(user, path, options);
        if (under.length > 0)
          throw new MemoryError('invalid_input', `${path} is a directory; only files can be edited`, {
            details: { path },
          });
        throw notFound(path);
      }
      const content = transform(file.content);
      this.#checkSize(path, content);
      return this.#put(user, { path, content, now: this.#timestamp(), expectedVersion: file.version }, options);
    });
  }

  /** Runs `attempt` and, when a concurrent writer made its versioned write lose, once more; a second loss is a `conflict`. */
  async #retryOnConflict(path: string, attempt: () => Promise<MemoryFile | typeof lostRace>): Promise<MemoryFile> {
    const first = await attempt();
    if (first !== lostRace) return first;
    const second = await attempt();
    if (second !== lostRace) return second;
    throw new MemoryError(
      'conflict',
      `${path} was changed by another writer while this edit was applied (twice); view it and try again`,
      {
        details: { path },
      },
    );
  }

  /** A versioned write that reports a lost race instead of throwing, so other conflicts (a taken path) are never retried. */
  async #put(user: UserScope, write: MemoryFileWrite, options: CallOptions): Promise<MemoryFile | typeof lostRace> {
    try {
      return await this.#store.putMemoryFile(user, write, options);
    } catch (error) {
      if (isMemoryError(error, 'conflict')) return lostRace;
      throw error;
    }
  }

  /** A new file must fit the user's cap, must not be a directory, and must not sit under a file. */
  #checkNewFile(path: string, all: readonly MemoryFileInfo[]): void {
    if (all.some((file) => isWithinMemoryPath(file.path, path))) {
      throw new MemoryError('conflict', `${path} is a directory; choose another file name`, { details: { path } });
    }
    const parentFile = all.find((file) => isWithinMemoryPath(path, file.path));
    if (parentFile !== undefined) {
      throw new MemoryError('conflict', `${parentFile.path} is a file, so ${path} cannot be created under it`, {
        details: { path },
      });
    }
    const counted = all.filter((file) => !isHiddenMemoryPath(file.path)).length;
    if (counted >= this.#limits.maxFilesPerUser) {
      throw new MemoryError(
        'budget_exceeded',
        `the memory directory already holds ${counted} files, the limit is ${this.#limits.maxFilesPerUser}: delete or merge files before creating ${path}`,
        {
          details: { path, limit: this.#limits.maxFilesPerUser },
        },
      );
    }
  }

  #checkSize(path: string, content: string): void {
    const bytes = Buffer.byteLength(content, 'utf8');
    if (bytes > this.#limits.maxFileBytes) {
      throw new MemoryError(
        'invalid_input',
        `${path} would be ${bytes} bytes, over the limit of ${this.#limits.maxFileBytes} bytes per memory file; split it or keep it shorter`,
        {
          details: { path, sizeBytes: bytes, limit: this.#limits.maxFileBytes },
        },
      );
    }
  }

  #timestamp(): string {
    return new Date(this.#now()).toISOString();
  }
}

/** Paths a command may write: normalized, and never the root itself. */
function writablePath(path: string): string {
  const normalized = normalizeMemoryPath(path);
  if (normalized === memoryRoot) {
    throw new MemoryError(
      'invalid_input',
      `${memoryRoot} itself cannot be written, deleted or renamed; name a file or directory under it`,
      { details: { path } },
    );
  }
  if (normalized.endsWith(`/${memoryDirectoryMarker}`)) {
    throw new MemoryError(
      'invalid_input',
      `${memoryDirectoryMarker} is the name mnemo keeps an empty directory with; choose another file name`,
      { details: { path } },
    );
  }
  return normalized;
}

function parentOf(path: string): string {
  return path.slice(0, path.lastIndexOf('/'));
}

function alreadyExists(path: string, version: number): MemoryError {
  return new MemoryError(
    'conflict',
    `${path} already exists (version ${version}); nothing was written: edit it with str_replace or insert, or delete it first`,
    {
      details: { path, version },
    },
  );
}

function notFound(path: string): MemoryError {
  return new MemoryError('not_found', `${path} does not exist; view ${memoryRoot} to see what does`, {
    details: { path },
  });
}

function checkViewRange(path: string, [first, last]: readonly [number, number], lineCount: number): [number, number] {
  const end = last === -1 ? lineCount : last;
  if (first < 1 || first > lineCount || end < first || end > lineCount) {
    throw new MemoryError(
      'invalid_input',
      `view_range [${first}, ${last}] is outside ${path}, which has lines 1 to ${lineCount} (use [first, last] with 1 ≤ first ≤ last ≤ ${lineCount}, or last -1)`,
      {
        details: { field: 'view_range', path, lineCount },
      },
    );
  }
  return [first, end];
}

/** Start offsets of every occurrence, overlapping ones included, so "exactly once" is never ambiguous. */
function occurrences(content: string, text: string): number[] {
  const found: number[] = [];
  for (let index = content.indexOf(text); index !== -1; index = content.indexOf(text, index + 1)) found.push(index);
  return found;
}

function lineOf(content: string, offset: number): number {
  let line = 1;
  for (let index = content.indexOf('\n'); index !== -1 && index < offset; index = content.indexOf('\n', index + 1))
    line += 1;
  return line;
}

function snippet(content: string, firstChanged: number, lastChanged: number): string {
  const { lines } = splitMemoryLines(content);
  if (lines.length === 0) return '(the file is now empty)';
  const first = Math.max(1, firstChanged - snippetContextLines);
  const last = Math.min(lines.length, lastChanged + snippetContextLines);
  return numberMemoryLines(lines.slice(first - 1, last), first);
}
