import { z } from 'zod';
import { MemoryError } from '../errors/memory-error.js';

/** The tool's name, as a model calls it (Anthropic's memory tool uses the same). */
export const memoryToolName = 'memory';

/** What the tool tells a model, in the spirit of Anthropic's memory tool: check memory first, keep it tidy. */
export const memoryToolDescription = [
  'Your persistent memory directory, /memories: files you wrote in earlier conversations with this user.',
  'Before answering, view /memories to recall what you learned; record durable facts, preferences and',
  'progress as you go, and keep the directory organized (update or delete stale files, do not duplicate).',
  'Commands: view (a directory listing with sizes, or a file with line numbers; view_range [first, last]',
  'lines, last -1 for the end), create (a new file; it refuses a path that exists), str_replace (old_str',
  'must occur exactly once), insert (insert_text after line insert_line, 0 for the top), delete (a file',
  'or a directory), rename (old_path to new_path). Every path is absolute under /memories.',
  "Where this differs from Anthropic's reference memory tool: str_replace matches old_str in the whole",
  'text, across lines; a view_range outside the file is an error, not an empty answer; files have a size',
  'cap (100 KB by default) and a user a file cap (1,000); listed sizes are of file contents (a directory',
  'sums the files under it); the name .mnemo-directory is reserved.',
].join(' ');

/** JSON Schema of a JSON Schema object, as tool-calling APIs take it (kept loose on purpose). */
export type JsonSchema = Readonly<Record<string, unknown>>;

const pathProperty = {
  type: 'string',
  description:
    'Absolute path under /memories, e.g. /memories/preferences.md (view, create, str_replace, insert, delete).',
};

/**
 * JSON Schema of the tool's input, flat (one object with a `command` enum) so every tool-calling API
 * accepts it, including those that refuse a top-level `oneOf`; {@link parseMemoryCommand} checks which
 * fields each command needs.
 */
export const memoryToolInputSchema: JsonSchema = deepFreeze({
  type: 'object',
  properties: {
    command: {
      type: 'string',
      enum: ['view', 'create', 'str_replace', 'insert', 'delete', 'rename'],
      description: 'What to do.',
    },
    path: pathProperty,
    view_range: {
      type: 'array',
      items: { type: 'integer' },
      minItems: 2,
      maxItems: 2,
      description: 'view of a file only: [first, last] line numbers, 1-based and inclusive; last -1 reads to the end.',
    },
    file_text: { type: 'string', description: 'create: the whole content of the file.' },
    old_str: {
      type: 'string',
      description: 'str_replace: the exact text to replace; it must occur exactly once in the file.',
    },
    new_str: { type: 'string', description: 'str_replace: the replacement text (may be empty).' },
    insert_line: {
      type: 'integer',
      minimum: 0,
      description: 'insert: the line after which to insert; 0 inserts at the top.',
    },
    insert_text: { type: 'string', description: 'insert: the text to insert (one or more lines).' },
    old_path: { type: 'string', description: 'rename: the file or directory to move.' },
    new_path: { type: 'string', description: 'rename: where to move it; nothing may exist there yet.' },
  },
  required: ['command'],
  additionalProperties: false,
});

const pathField = z.string({ error: 'must be a string' });
const lineNumber = z.number({ error: 'must be a number' }).int({ error: 'must be an integer' });

const commandSchema = z.discriminatedUnion(
  'command',
  [
    z.strictObject({
      command: z.literal('view'),
      path: pathField,
      view_range: z.tuple([lineNumber, lineNumber]).optional(),
    }),
    z.strictObject({
      command: z.literal('create'),
      path: pathField,
      file_text: z.string({ error: 'must be a string' }),
    }),
    z.strictObject({
      command: z.literal('str_replace'),
      path: pathField,
      old_str: z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' }),
      new_str: z.string({ error: 'must be a string' }),
    }),
    z.strictObject({
      command: z.literal('insert'),
      path: pathField,
      insert_line: lineNumber.min(0, { error: 'must be 0 or more' }),
      insert_text: z.string({ error: 'must be a string' }),
    }),
    z.strictObject({ command: z.literal('delete'), path: pathField }),
    z.strictObject({ command: z.literal('rename'), old_path: pathField, new_path: pathField }),
  ],
  { error: 'must be one of view, create, str_replace, insert, delete, rename' },
);

/** One memory-tool call, checked: the command and exactly the fields it needs. */
export type MemoryCommand = z.infer<typeof commandSchema>;

/**
 * Checks a tool call's input (parsed JSON from a model, hence `unknown`) and returns it typed. Throws
 * `invalid_input` naming every offending field, e.g. `memory tool input: old_str: must be a string`.
 * Paths are checked later, by `normalizeMemoryPath`.
 */
export function parseMemoryCommand(input: unknown): MemoryCommand {
  const result = commandSchema.safeParse(input);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const field = issue.path.length === 0 ? 'input' : issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') return `${field}: unknown field(s) ${issue.keys.join(', ')}`;
    return `${field}: ${issue.message}`;
  });
  throw new MemoryError('invalid_input', `memory tool input: ${problems.join('; ')}`, {
    details: { fields: result.error.issues.map((issue) => issue.path.map(String).join('.') || 'input') },
  });
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
