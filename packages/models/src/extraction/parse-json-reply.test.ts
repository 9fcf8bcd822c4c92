import { describe, expect, it } from 'vitest';
import { parseJsonReply } from './parse-json-reply.js';

describe('parseJsonReply', () => {
  it('reads a bare JSON reply', () => {
    expect(parseJsonReply(' {"facts": []}\n')).toEqual({ ok: true, value: { facts: [] } });
  });

  it('reads a ```json fenced block, with or without words around it', () => {
    expect(parseJsonReply('```json\n{"facts": [1]}\n```')).toEqual({ ok: true, value: { facts: [1] } });
    expect(parseJsonReply('Here you go:\n```\n{"facts": [2]}\n```\nAnything else?')).toEqual({
      ok: true,
      value: { facts: [2] },
    });
  });

  it('reads an object that a sentence surrounds', () => {
    expect(parseJsonReply('Sure! {"facts": [{"a": "}"}]} Hope this helps.')).toEqual({
      ok: true,
      value: { facts: [{ a: '}' }] },
    });
  });

  it('says why when there is no JSON to read', () => {
    const empty = parseJsonReply('   ');
    const prose = parseJsonReply('The user likes pizza.');
    const cut = parseJsonReply('{"facts": [{"subject": "user", "attr');

    expect(empty).toEqual({ ok: false, problem: 'the reply is empty' });
    expect(prose.ok).toBe(false);
    expect(!prose.ok && prose.problem).toMatch(/^the reply is not JSON \(/);
    expect(cut.ok).toBe(false);
  });
});
