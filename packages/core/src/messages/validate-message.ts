import { MemoryError } from '../errors/memory-error.js';
import { copyMetadata } from './copy-metadata.js';
import { messageRoles, type MessageInput, type MessageRole, type Metadata, type ToolCall } from './message.js';
import { reservedMetadataKey, reservedMetadataProblem } from './regenerated-replies.js';

/** Limits applied to every appended message. */
export interface MessageLimits {
  /** Longest accepted `content`, in UTF-16 code units (JavaScript string length). Default 200,000. */
  readonly maxContentChars: number;
  /** Largest accepted `metadata`, in characters of its JSON. Default 16,384. */
  readonly maxMetadataChars: number;
  /** Most tool calls one assistant message may carry. Default 128. */
  readonly maxToolCalls: number;
}

/** The limits used when the engine is given none. */
export const defaultMessageLimits: MessageLimits = Object.freeze({
  maxContentChars: 200_000,
  maxMetadataChars: 16_384,
  maxToolCalls: 128,
});

const maxShortFieldChars = 256;

/**
 * Checks one message as it arrives from a caller (possibly parsed JSON, so typed `unknown`) and returns
 * it typed. Throws `invalid_input` naming the field for an unknown role, empty content (allowed only on
 * an assistant message with tool calls), content over the limit, a malformed tool call, a `tool`
 * message without `toolCallId`, a bad date or metadata that is not a JSON object.
 */
export function validateMessageInput(
  input: unknown,
  limits: MessageLimits = defaultMessageLimits,
  index?: number,
): MessageInput {
  const where = index === undefined ? 'message' : `message ${index}`;
  const fail = (field: string, problem: string, details: Record<string, unknown> = {}): never => {
    throw new MemoryError('invalid_input', `${where}: ${field} ${problem}`, { details: { field, index, ...details } });
  };
  if (typeof input !== 'object' || input === null || Array.isArray(input)) fail('message', 'must be an object');
  const raw = input as Record<string, unknown>;

  const role = raw.role;
  if (typeof role !== 'string' || !(messageRoles as readonly string[]).includes(role)) {
    fail('role', `must be one of ${messageRoles.join(', ')} (got ${JSON.stringify(role)})`, { allowed: messageRoles });
  }
  const content = raw.content ?? (role === 'assistant' && raw.toolCalls !== undefined ? '' : undefined);
  if (typeof content !== 'string') fail('content', 'must be a string');
  const text = content as string;
  // PostgreSQL cannot store NUL in text; refusing it here keeps every store accepting the same input.
  if (text.includes('\u0000')) fail('content', 'must not contain NUL characters (U+0000)');
  if (text.length > limits.maxContentChars) {
    fail('content', `is ${text.length} characters, over the limit of ${limits.maxContentChars}`, {
      length: text.length,
      limit: limits.maxContentChars,
    });
  }
  const toolCalls = raw.toolCalls === undefined ? undefined : checkToolCalls(raw.toolCalls, limits, fail);
  if (role === 'assistant' && toolCalls !== undefined && toolCalls.length === 0) fail('toolCalls', 'must not be empty');
  if (toolCalls !== undefined && role !== 'assistant') fail('toolCalls', 'are allowed only on assistant messages');
  if (text.trim().length === 0 && !(role === 'assistant' && toolCalls !== undefined)) {
    fail('content', 'must not be empty');
  }
  const toolCallId = optionalShortString(raw.toolCallId, 'toolCallId', fail);
  if (role === 'tool' && toolCallId === undefined) fail('toolCallId', 'is required on a tool message');
  if (role !== 'tool' && toolCallId !== undefined) fail('toolCallId', 'is allowed only on tool messages');

  return {
    role: role as MessageRole,
    content: text,
    ...defined('name', optionalShortString(raw.name, 'name', fail)),
    ...defined('toolCalls', toolCalls),
    ...defined('toolCallId', toolCallId),
    ...defined('createdAt', checkCreatedAt(raw.createdAt, fail)),
    ...defined('metadata', checkMetadata(raw.metadata, limits, fail)),
    ...defined('idempotencyKey', optionalShortString(raw.idempotencyKey, 'idempotencyKey', fail)),
  };
}

type Fail = (field: string, problem: string, details?: Record<string, unknown>) => never;

function defined<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

function optionalShortString(value: unknown, field: string, fail: Fail): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value.length === 0) return fail(field, 'must be a non-empty string');
  if (value.length > maxShortFieldChars) return fail(field, `must be at most ${maxShortFieldChars} characters`);
  return value;
}

function checkToolCalls(value: unknown, limits: MessageLimits, fail: Fail): ToolCall[] {
  if (!Array.isArray(value)) return fail('toolCalls', 'must be an array');
  if (value.length > limits.maxToolCalls) return fail('toolCalls', `must hold at most ${limits.maxToolCalls} calls`);
  const ids = new Set<string>();
  return value.map((call: unknown, position) => {
    const field = `toolCalls[${position}]`;
    if (typeof call !== 'object' || call === null) return fail(field, 'must be an object');
    const { id, type, function: fn } = call as Record<string, unknown>;
    if (typeof id !== 'string' || id.length === 0 || id.length > maxShortFieldChars)
      return fail(`${field}.id`, 'must be a non-empty string');
    if (ids.has(id)) return fail(`${field}.id`, `repeats the id ${JSON.stringify(id)}`);
    ids.add(id);
    if (type !== undefined && type !== 'function') return fail(`${field}.type`, 'must be "function"');
    if (typeof fn !== 'object' || fn === null) return fail(`${field}.function`, 'must be an object');
    const { name, arguments: args } = fn as Record<string, unknown>;
    if (typeof name !== 'string' || name.length === 0)
      return fail(`${field}.function.name`, 'must be a non-empty string');
    if (typeof args !== 'string') return fail(`${field}.function.arguments`, 'must be a string (JSON text)');
    if (args.length > limits.maxContentChars) return fail(`${field}.function.arguments`, 'are over the content limit');
    return { id, type: 'function' as const, function: { name, arguments: args } };
  });
}

function checkCreatedAt(value: unknown, fail: Fail): string | undefined {
  if (value === undefined || value === null) return undefined;
  const time =
    typeof value === 'string' || typeof value === 'number'
      ? new Date(value)
      : value instanceof Date
        ? value
        : undefined;
  if (time === undefined || Number.isNaN(time.getTime())) return fail('createdAt', 'must be an ISO 8601 date');
  return time.toISOString();
}

function checkMetadata(value: unknown, limits: MessageLimits, fail: Fail): Metadata | undefined {
  if (value === undefined || value === null) return undefined;
  const metadata = copyMetadata(value, limits.maxMetadataChars, (problem, details) =>
    fail('metadata', problem, details),
  );
  const reserved = reservedMetadataProblem(metadata);
  return reserved === undefined ? metadata : fail(`metadata.${reservedMetadataKey}`, reserved);
}
