// Test support: what OpenAI's strict structured outputs refuse in a JSON schema.

/** Every object schema must list all its properties as required and forbid others, as OpenAI's strict mode demands. */
export function strictSchemaViolations(schema: unknown, path = '$'): string[] {
  if (typeof schema !== 'object' || schema === null) return [];
  const node = schema as {
    type?: unknown;
    properties?: Record<string, unknown>;
    required?: unknown;
    additionalProperties?: unknown;
    items?: unknown;
  };
  const problems: string[] = [];
  if (node.type === 'object') {
    const keys = Object.keys(node.properties ?? {});
    const required = Array.isArray(node.required) ? node.required : [];
    if (keys.some((key) => !required.includes(key)) || required.length !== keys.length)
      problems.push(`${path}: required must list every property`);
    if (node.additionalProperties !== false) problems.push(`${path}: additionalProperties must be false`);
  }
  for (const [key, child] of Object.entries(node.properties ?? {}))
    problems.push(...strictSchemaViolations(child, `${path}.${key}`));
  if (node.items !== undefined) problems.push(...strictSchemaViolations(node.items, `${path}[]`));
  for (const forbidden of ['minimum', 'maximum', 'minItems', 'pattern'])
    if (forbidden in node) problems.push(`${path}: ${forbidden} is not portable`);
  return problems;
}
