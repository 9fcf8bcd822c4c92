/** A model reply read as JSON, or why it could not be. */
export type ParsedJsonReply =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly problem: string };

const fencedBlock = /```(?:json|JSON)?[ \t]*\r?\n?([\s\S]*?)```/;

/**
 * Reads the JSON in a model's reply: the whole reply, else the first ```json fenced block, else the
 * span from the first `{` to the last `}` (models like to add a sentence around the object). Says why
 * when none of them parses.
 */
export function parseJsonReply(content: string): ParsedJsonReply {
  const text = content.trim();
  const candidates = [text];
  const fenced = fencedBlock.exec(text)?.[1]?.trim();
  if (fenced !== undefined) candidates.push(fenced);
  const first = text.indexOf('{');
  const last = text.lastIndexOf('}');
  if (first >= 0 && last > first) candidates.push(text.slice(first, last + 1));
  if (text.length === 0) return { ok: false, problem: 'the reply is empty' };
  let problem = '';
  for (const candidate of candidates) {
    try {
      return { ok: true, value: JSON.parse(candidate) as unknown };
    } catch (error) {
      // The whole reply's parse error is the one worth feeding back.
      if (problem === '') problem = `the reply is not JSON (${error instanceof Error ? error.message : String(error)})`;
    }
  }
  return { ok: false, problem };
}
