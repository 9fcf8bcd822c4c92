/** The value as a plain object, or `undefined` when it is none (null, an array, a primitive). */
export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** The value as an array, or `undefined` when it is none. */
export function asArray(value: unknown): unknown[] | undefined {
  return Array.isArray(value) ? value : undefined;
}

/** Parses JSON text; `undefined` when it is not JSON (an upstream's garbage is data to report, not an exception). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** An event's `data` as a JSON object; `undefined` for anything else (`[DONE]`, garbage). */
export function parseEventData(data: string): Record<string, unknown> | undefined {
  return asRecord(parseJson(data));
}

/**
 * Reads server-sent events from text arriving in pieces of any size and hands each event's `data` (its
 * `data:` lines joined) to `onData`; `end()` delivers an event the stream did not close with a blank line.
 */
export class ServerSentEventReader {
  #buffer = '';
  #data: string[] = [];
  readonly #onData: (data: string) => void;

  constructor(onData: (data: string) => void) {
    this.#onData = onData;
  }

  /** Feeds decoded text of the stream. */
  push(text: string): void {
    this.#buffer += text;
    const lines = this.#buffer.split(/\r\n|\r|\n/);
    this.#buffer = lines.pop() ?? '';
    for (const line of lines) this.#line(line);
  }

  /** Delivers what is left once the stream ended (or broke off). */
  end(): void {
    if (this.#buffer !== '') this.#line(this.#buffer);
    this.#buffer = '';
    this.#line('');
  }

  #line(line: string): void {
    if (line === '') {
      if (this.#data.length > 0) this.#onData(this.#data.join('\n'));
      this.#data = [];
      return;
    }
    if (line.startsWith('data:')) this.#data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
  }
}
