import { describe, expect, it } from 'vitest';
import { locomoSecondsPerTurn } from '../locomo/parse-locomo-conversation.js';
import { parseLocomoTranscript } from './parse-locomo-transcript.js';

// An invented sample in LoCoMo's shape (no LoCoMo data is copied into the repository).
const sample = {
  sample_id: 'conv-demo',
  conversation: {
    speaker_a: 'Ada',
    speaker_b: 'Ben',
    session_2_date_time: '9:05 am on 3 June, 2024',
    session_2: [
      { speaker: 'Ada', dia_id: 'D2:1', text: 'Back from the ridge.' },
      { speaker: 'Ben', dia_id: 'D2:2', text: 'How was the relay?' },
    ],
    session_1_date_time: '1:56 pm on 8 May, 2023',
    session_1: [
      {
        speaker: 'Ada',
        dia_id: 'D1:1',
        text: 'Look at my new antenna!',
        img_url: ['http://example.invalid/a.jpg'],
        blip_caption: 'a photo of an antenna on a roof',
      },
      { speaker: 'Ben', dia_id: 'D1:2', text: 'Nice, what gain?', 're-download': true },
    ],
    // LoCoMo quirk: date keys of sessions that do not exist must be ignored.
    session_3_date_time: '2:00 pm on 1 July, 2024',
  },
  qa: [],
};

const other = {
  sample_id: 'conv-other',
  conversation: {
    speaker_a: 'Cy',
    speaker_b: 'Di',
    session_1: [{ speaker: 'Di', dia_id: 'D1:1', text: 'Hello from Di.' }],
  },
};

describe('parseLocomoTranscript', () => {
  it('maps the first sample: sessions in numeric order, speaker_a to user, speaker_b to assistant', () => {
    const transcript = parseLocomoTranscript(JSON.stringify([sample, other]), 'demo.json');

    expect(transcript.name).toBe('conv-demo');
    expect(transcript.messages.map((message) => [message.role, message.content])).toEqual([
      ['user', 'Look at my new antenna! [shared image: a photo of an antenna on a roof]'],
      ['assistant', 'Nice, what gain?'],
      ['user', 'Back from the ridge.'],
      ['assistant', 'How was the relay?'],
    ]);
  });

  it('dates each turn from its session start plus a few seconds per turn', () => {
    const { messages } = parseLocomoTranscript(JSON.stringify([sample]), 'demo.json');

    expect(messages.map((message) => message.createdAt)).toEqual([
      '2023-05-08T13:56:00.000Z',
      new Date(Date.UTC(2023, 4, 8, 13, 56, locomoSecondsPerTurn)).toISOString(),
      '2024-06-03T09:05:00.000Z',
      new Date(Date.UTC(2024, 5, 3, 9, 5, locomoSecondsPerTurn)).toISOString(),
    ]);
  });

  it('keeps the turn id, session and speaker in metadata', () => {
    const { messages } = parseLocomoTranscript(JSON.stringify([sample]), 'demo.json');

    expect(messages[3]!.metadata).toEqual({ sampleId: 'conv-demo', diaId: 'D2:2', session: 2, speaker: 'Ben' });
  });

  it('reads the sample named by its sample_id', () => {
    const transcript = parseLocomoTranscript(JSON.stringify([sample, other]), 'demo.json', 'conv-other');

    expect(transcript.name).toBe('conv-other');
    expect(transcript.messages).toEqual([
      {
        role: 'assistant',
        content: 'Hello from Di.',
        metadata: { sampleId: 'conv-other', diaId: 'D1:1', session: 1, speaker: 'Di' },
      },
    ]);
  });

  it('throws not_found listing the samples when the sample_id is unknown', () => {
    expect(() => parseLocomoTranscript(JSON.stringify([sample, other]), 'demo.json', 'conv-9')).toThrow(
      'demo.json has no conversation "conv-9" (it has conv-demo, conv-other)',
    );
  });

  it('names the turn whose speaker is neither of the two', () => {
    const broken = {
      ...other,
      conversation: { ...other.conversation, session_1: [{ speaker: 'Eve', dia_id: 'D1:1', text: 'hi' }] },
    };

    expect(() => parseLocomoTranscript(JSON.stringify([broken]), 'demo.json')).toThrow(
      'demo.json conv-other: session_1[0] (D1:1): speaker "Eve" is neither speaker_a nor speaker_b',
    );
  });

  it('names the field of a malformed turn', () => {
    const broken = {
      ...other,
      conversation: { ...other.conversation, session_1: [{ speaker: 'Cy', dia_id: 'D1:1' }] },
    };

    expect(() => parseLocomoTranscript(JSON.stringify([broken]), 'demo.json')).toThrow(
      /demo\.json conv-other: session_1\[0\]: text: /,
    );
  });

  it('names the session and the line whose date cannot be read', () => {
    const broken = { ...other, conversation: { ...other.conversation, session_1_date_time: 'yesterday' } };

    expect(() => parseLocomoTranscript(JSON.stringify([broken], null, 2), 'demo.json')).toThrow(
      /demo\.json conv-other: session_1_date_time "yesterday" \(line 14\) is not a date; readable forms: /,
    );
  });

  it('reads the date forms of real exports: dotted with seconds, ISO 8601, YYYY-MM-DD HH:MM', () => {
    const dated = {
      sample_id: 'conv-real',
      conversation: {
        speaker_a: 'Cy',
        speaker_b: 'Di',
        session_1_date_time: '29.12.2023, 22:42:04',
        session_1: [{ speaker: 'Cy', dia_id: 'D1:1', text: 'Late again.' }],
        session_2_date_time: '2024-01-02T08:15:00+01:00',
        session_2: [{ speaker: 'Di', dia_id: 'D2:1', text: 'Morning.' }],
        session_3_date_time: '2024-01-05 19:30',
        session_3: [{ speaker: 'Cy', dia_id: 'D3:1', text: 'Evening.' }],
      },
    };

    const { messages, warnings } = parseLocomoTranscript(JSON.stringify([dated]), 'real.json');

    expect(messages.map((message) => message.createdAt)).toEqual([
      '2023-12-29T22:42:04.000Z',
      '2024-01-02T07:15:00.000Z',
      '2024-01-05T19:30:00.000Z',
    ]);
    expect(warnings).toEqual([]);
  });

  it('dates an unreadable session by session order with a warning when lenient', () => {
    const mixed = {
      sample_id: 'conv-mixed',
      conversation: {
        speaker_a: 'Cy',
        speaker_b: 'Di',
        session_1_date_time: 'sometime in spring',
        session_1: [
          { speaker: 'Cy', dia_id: 'D1:1', text: 'One.' },
          { speaker: 'Di', dia_id: 'D1:2', text: 'Two.' },
        ],
        session_2_date_time: '2024-03-01 10:00',
        session_2: [{ speaker: 'Cy', dia_id: 'D2:1', text: 'Three.' }],
        session_3_date_time: '??',
        session_3: [{ speaker: 'Di', dia_id: 'D3:1', text: 'Four.' }],
      },
    };

    expect(() => parseLocomoTranscript(JSON.stringify([mixed]), 'mixed.json')).toThrow(
      /session_1_date_time "sometime in spring" \(line 1\) is not a date/,
    );
    const { messages, warnings } = parseLocomoTranscript(JSON.stringify([mixed]), 'mixed.json', undefined, {
      lenient: true,
    });

    expect(messages.map((message) => message.createdAt)).toEqual([
      '2024-03-01T09:59:30.000Z',
      '2024-03-01T09:59:40.000Z',
      '2024-03-01T10:00:00.000Z',
      '2024-03-01T10:00:10.000Z',
    ]);
    expect(warnings).toEqual([
      'mixed.json conv-mixed: session_1_date_time "sometime in spring" (line 1) is not a date: dated by session order',
      'mixed.json conv-mixed: session_3_date_time "??" (line 1) is not a date: dated by session order',
    ]);
  });

  it('names the line of the bad date in its own sample when an earlier sample has the same text', () => {
    const broken = (id: string) => ({
      ...other,
      sample_id: id,
      conversation: { ...other.conversation, session_1_date_time: 'n/a' },
    });
    const text = JSON.stringify([broken('conv-a'), broken('conv-b')], null, 2);

    expect(() => parseLocomoTranscript(text, 'two.json', 'conv-b')).toThrow(
      /two\.json conv-b: session_1_date_time "n\/a" \(line 29\) is not a date/,
    );
    expect(() => parseLocomoTranscript(text, 'two.json', 'conv-a')).toThrow(/\(line 14\)/);
  });

  it('reads only the chosen sample, so a bad date in another one does not matter', () => {
    const broken = { ...sample, conversation: { ...sample.conversation, session_1_date_time: 'n/a' } };

    expect(parseLocomoTranscript(JSON.stringify([broken, other]), 'demo.json', 'conv-other').messages).toHaveLength(1);
  });

  it('rejects a file that is not a non-empty array', () => {
    expect(() => parseLocomoTranscript('{}', 'demo.json')).toThrow(
      'demo.json must be a non-empty JSON array of LoCoMo samples',
    );
    expect(() => parseLocomoTranscript('[', 'demo.json')).toThrow(/demo\.json is not valid JSON/);
  });
});
