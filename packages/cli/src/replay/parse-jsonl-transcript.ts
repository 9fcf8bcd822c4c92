import { defaultMessageLimits, isMemoryError, MemoryError, type MessageInput } from '@mnemo/core';
import { checkToolSequence, validateMessageInput } from '@mnemo/core/internals';

/**
 * Parses a JSONL transcript: one message per line (`{"role","content","name"?,"createdAt"?,"metadata"?}`
 * and the other fields of a `MessageInput`), blank lines ignored. Validates every line with the core's
 * rules and the tool-call pairing of the whole transcript, so a replay never starts on a broken file.
 * Throws `invalid_input` naming `source` and the 1-based line number.
 */
export function parseJsonlTranscript(text: string, source: string): MessageInput[] {
  const messages: MessageInput[] = [];
  const lineNumbers: number[] = [];
  text.split(/\r?\n/).forEach((line, index) => {
    if (line.trim().length === 0) return;
    const lineNumber = index + 1;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw lineError(source, lineNumber, `is not valid JSON (${(error as Error).message})`);
    }
    try {
      messages.push(validateMessageInput(value, defaultMessageLimits));
    } catch (error) {
      throw relocate(error, source, lineNumber);
    }
    lineNumbers.push(lineNumber);
  });
  try {
    checkToolSequence([], messages);
  } catch (error) {
    const index = isMemoryError(error) ? error.details?.index : undefined;
    throw relocate(error, source, typeof index === 'number' ? (lineNumbers[index] ?? 0) : 0);
  }
  return messages;
}

function lineError(
  source: string,
  lineNumber: number,
  problem: string,
  details: Record<string, unknown> = {},
  cause?: unknown,
): MemoryError {
  return new MemoryError('invalid_input', `${source} line ${lineNumber}: ${problem}`, {
    details: { ...details, file: source, line: lineNumber },
    ...(cause === undefined ? {} : { cause }),
  });
}

// The core names the message ("message: role must be…", "message 3: tool result…"); the file's reader wants the line.
function relocate(error: unknown, source: string, lineNumber: number): unknown {
  if (!isMemoryError(error, 'invalid_input')) return error;
  const problem = error.message.replace(/^message( \d+)?: /, '');
  return lineError(source, lineNumber, problem, { ...error.details }, error);
}
