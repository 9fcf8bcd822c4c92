import { readFile } from 'node:fs/promises';
import type { MessageInput } from '@mnemo/core';

/** Reads a JSONL transcript (one `MessageInput` per line, blank lines ignored), e.g. `examples/mesh-radio-node-7.jsonl`. */
export async function loadJsonlConversation(path: string): Promise<MessageInput[]> {
  const text = await readFile(path, 'utf8');
  return text
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line) as MessageInput);
}
