// Field readers shared by the extraction schemas: each returns the clean value or pushes a problem naming the field's path.

/**
 * Checks the `sourceSeqs` of one extracted item: a non-empty list of integers, each the seq of a message
 * the prompt showed. Returns them sorted without repeats, or pushes what is wrong (naming `path`) to `problems`.
 */
export function readSourceSeqs(
  value: unknown,
  path: string,
  shownSeqs: ReadonlySet<number>,
  problems: string[],
): number[] | undefined {
  if (!Array.isArray(value) || value.length === 0 || !value.every((seq) => Number.isInteger(seq))) {
    problems.push(
      `${path}.sourceSeqs must be a non-empty list of message seqs (got ${JSON.stringify(value) ?? 'nothing'})`,
    );
    return undefined;
  }
  const unknown = (value as number[]).filter((seq) => !shownSeqs.has(seq));
  if (unknown.length > 0) {
    problems.push(
      `${path}.sourceSeqs has ${unknown.join(', ')}, not among the seqs shown (${[...shownSeqs].join(', ')})`,
    );
    return undefined;
  }
  return [...new Set(value as number[])].sort((a, b) => a - b);
}

/** A trimmed non-empty string, or `undefined` with a problem naming `path`. */
export function readText(value: unknown, path: string, problems: string[]): string | undefined {
  if (typeof value === 'string' && value.trim().length > 0) return value.trim();
  problems.push(`${path} must be a non-empty string (got ${JSON.stringify(value) ?? 'nothing'})`);
  return undefined;
}

/** True for a plain JSON object. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
