import { isMemoryError } from '@mnemo/core';
import { describe, expect, it } from 'vitest';
import { inventedLocomoFile } from './invented-locomo.js';
import { parseLocomoDataset } from './parse-locomo-dataset.js';
import { resolveEvidence } from './resolve-evidence.js';

const parse = (value: unknown) => parseLocomoDataset(JSON.stringify(value), 'tiny.json');

function expectInvalid(run: () => unknown, pattern: RegExp): void {
  try {
    run();
  } catch (error) {
    expect(isMemoryError(error, 'invalid_input')).toBe(true);
    expect((error as Error).message).toMatch(pattern);
    return;
  }
  throw new Error('expected invalid_input');
}

describe('parseLocomoDataset', () => {
  it('maps speaker_a to user and speaker_b to assistant, in session order, with names, captions and dia ids', () => {
    const [sample] = parse(inventedLocomoFile());

    expect(sample!.sampleId).toBe('invented-1');
    expect([sample!.speakerA, sample!.speakerB]).toEqual(['Ava', 'Ben']);
    expect(sample!.turns.map((turn) => turn.diaId)).toEqual([
      'D1:1',
      'D1:2',
      'D1:3',
      'D1:4',
      'D2:1',
      'D2:2',
      'D2:3',
      'D2:4',
      'D3:1',
      'D3:2',
      'D3:3',
      'D3:4',
    ]);
    expect(sample!.turns.slice(0, 2).map(({ role, speaker }) => ({ role, speaker }))).toEqual([
      { role: 'user', speaker: 'Ava' },
      { role: 'assistant', speaker: 'Ben' },
    ]);
    expect(sample!.turns[2]!.content).toBe(
      'Pixel already loves the park near the library. [shared image: a photo of a beagle on green grass]',
    );
    expect(sample!.turns[3]!.content).toBe("Cute! I'm reading a novel about lighthouse keepers.");
  });

  it('dates each turn at its session start plus ten seconds per turn, in UTC', () => {
    const [sample] = parse(inventedLocomoFile());

    expect(sample!.turns[0]!.createdAt).toBe('2023-05-08T13:56:00.000Z');
    expect(sample!.turns[3]!.createdAt).toBe('2023-05-08T13:56:30.000Z');
    expect(sample!.turns[4]!.createdAt).toBe('2023-06-20T10:05:00.000Z');
    expect(sample!.turns[11]!.createdAt).toBe('2023-08-02T19:30:30.000Z');
  });

  it('ignores a session date whose session does not exist', () => {
    const [sample] = parse(inventedLocomoFile());

    expect(new Set(sample!.turns.map((turn) => turn.session))).toEqual(new Set([1, 2, 3]));
  });

  it('repairs evidence like the baseline tool: splits packed ids, reads D:3:2 and D2:03, drops unknown and malformed ids', () => {
    const [sample] = parse(inventedLocomoFile());
    const evidence = sample!.questions.map((question) => question.evidence);

    expect(evidence).toEqual([['D1:1'], ['D2:1'], ['D1:2', 'D2:2', 'D3:2'], [], ['D2:3'], ['D1:1']]);
    expect(sample!.repairs.map(({ key, kind, from }) => `${key} ${kind} ${from}`)).toEqual([
      'invented-1#2 split D1:2; D2:2',
      'invented-1#2 rewritten D:3:2',
      'invented-1#4 rewritten D2:03',
      'invented-1#5 missing D9:9',
      'invented-1#5 unparseable D',
    ]);
  });

  it('keys questions by sample and 0-based qa position, keeps categories, and reads a numeric answer as text', () => {
    const [sample] = parse(inventedLocomoFile());

    expect(sample!.questions.map((question) => question.key)).toEqual([
      'invented-1#0',
      'invented-1#1',
      'invented-1#2',
      'invented-1#3',
      'invented-1#4',
      'invented-1#5',
    ]);
    expect(sample!.questions.map((question) => question.category)).toEqual([4, 2, 1, 3, 5, 4]);
    expect(sample!.questions[5]!.answer).toBe('2023');
    expect(sample!.questions[4]!.answer).toBeUndefined();
  });

  it('throws invalid_input naming the place for broken JSON, a stranger speaker, a bad date or a bad category', () => {
    expectInvalid(() => parseLocomoDataset('[{', 'tiny.json'), /tiny\.json is not valid JSON/);
    expectInvalid(() => parse([]), /non-empty JSON array/);
    const stranger = inventedLocomoFile() as { conversation: { session_1: { speaker: string }[] } }[];
    stranger[0]!.conversation.session_1[1]!.speaker = 'Cleo';
    expectInvalid(() => parse(stranger), /session_1\[1\] \(D1:2\): speaker "Cleo" is neither speaker_a nor speaker_b/);
    const badDate = inventedLocomoFile() as { conversation: Record<string, unknown> }[];
    badDate[0]!.conversation.session_2_date_time = 'sometime in June';
    expectInvalid(() => parse(badDate), /session_2_date_time "sometime in June" \(line 1\) is not a date/);
    expect(parseLocomoDataset(JSON.stringify(badDate), 'tiny.json', { lenient: true })[0]!.warnings).toEqual([
      'tiny.json invented-1: session_2_date_time "sometime in June" (line 1) is not a date: dated by session order',
    ]);
    const badCategory = inventedLocomoFile() as { qa: { category: number }[] }[];
    badCategory[0]!.qa[0]!.category = 7;
    expectInvalid(() => parse(badCategory), /qa\[0\]: category/);
  });
});

describe('resolveEvidence', () => {
  it('counts a repeated id once and reports the duplicate', () => {
    const resolved = resolveEvidence(['D4:5', 'D4:5', 'D5:5'], new Set(['D4:5', 'D5:5']));

    expect(resolved.ids).toEqual(['D4:5', 'D5:5']);
    expect(resolved.repairs).toEqual([{ key: '', kind: 'duplicate', from: 'D4:5', to: 'D4:5' }]);
  });

  it('splits on whitespace as well as semicolons', () => {
    expect(resolveEvidence(['D9:1 D4:4 D4:6'], new Set(['D9:1', 'D4:4', 'D4:6'])).ids).toEqual([
      'D9:1',
      'D4:4',
      'D4:6',
    ]);
  });
});
