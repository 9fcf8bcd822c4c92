import { describe, expect, it } from 'vitest';
import { createGptTokenCounter } from '../tokens/gpt-token-counter.js';
import { ExtractiveSummarizer } from './extractive-summarizer.js';
import type { SummarySourceMessage } from '../messages/summary-source-message.js';

const counter = createGptTokenCounter();
const summarizer = new ExtractiveSummarizer({ tokenCounter: counter });

function messages(lines: readonly string[], startSeq = 1, day = 8): SummarySourceMessage[] {
  return lines.map((content, index) => ({
    seq: startSeq + index,
    role: index % 2 === 0 ? 'user' : 'assistant',
    content,
    createdAt: new Date(Date.UTC(2024, 4, day, 10, index)).toISOString(),
  }));
}

const chat = messages([
  'Hi there!',
  'Hello! How can I help?',
  'My name is Dana Okafor, callsign KD2QXR, node !a3f9c2d1.',
  'Nice to meet you, Dana.',
  'Thanks!',
  'You are welcome.',
  'I plan to hike Mount Marcy on 2024-06-14 with a 10000 mAh battery.',
  'Got it: Mount Marcy, June 14, 10000 mAh.',
  'Please use metric units and no emoji in replies.',
  'Will do.',
  'lol ok',
]);

describe('ExtractiveSummarizer', () => {
  it('leaves out filler even when there is room, so an early summary is not padded', async () => {
    const result = await summarizer.summarize({
      messages: messages(['hey bot, you there?', 'Loud and clear.', 'Our cabin node is !c0ffee42.', 'Okay.']),
      maxSummaryTokens: 200,
    });

    expect(result.content).toBe('[2024-05-08]\nuser: Our cabin node is !c0ffee42.');
  });

  it('drops a clause that carries nothing from a sentence whose other clause does', async () => {
    const result = await summarizer.summarize({
      messages: messages([
        "Ilse's callsign is KE7QTR, if you ever hear her on the repeater.",
        'Noted.',
        'Nice weather, lovely day.',
      ]),
      maxSummaryTokens: 200,
    });

    expect(result.content).toBe("[2024-05-08]\nuser: Ilse's callsign is KE7QTR.");
  });

  it('keeps names, ids, dates, amounts and preferences and drops small talk', async () => {
    const result = await summarizer.summarize({ messages: chat, maxSummaryTokens: 120 });
    for (const fact of ['Dana Okafor', 'KD2QXR', '!a3f9c2d1', '2024-06-14', '10000 mAh', 'metric units'])
      expect(result.content).toContain(fact);
    for (const chatter of ['Hi there', 'lol ok', 'Thanks!', 'How can I help'])
      expect(result.content).not.toContain(chatter);
    expect(result.outputTokens).toBeLessThanOrEqual(120);
    expect(result.content.split('\n').slice(0, 2)).toEqual(['[2024-05-08]', expect.stringMatching(/^user: /)]);
  });

  it('stays under maxSummaryTokens and keeps the densest facts when the bound is tight', async () => {
    const result = await summarizer.summarize({ messages: chat, maxSummaryTokens: 30 });
    expect(counter.countText(result.content)).toBeLessThanOrEqual(30);
    expect(result.content).toMatch(/KD2QXR|Mount Marcy/);
  });

  it('carries the previous summary through whole when the new messages hold nothing worth keeping', async () => {
    const first = await summarizer.summarize({ messages: chat, maxSummaryTokens: 120 });
    const later = messages(['ok cool', 'Sure.', 'The weather looks fine.', 'Good.'], 12);
    const second = await summarizer.summarize({
      previousSummary: first.content,
      messages: later,
      maxSummaryTokens: 120,
    });
    expect(second.content).toBe(first.content);
  });

  it('folds the previous summary in so older facts survive a second compaction, ahead of the new facts', async () => {
    const first = await summarizer.summarize({ messages: chat, maxSummaryTokens: 120 });
    const later = messages(
      ['ok cool', 'Sure.', 'My new repeater runs on 146.52 MHz at Lake Placid.', 'The weather looks fine.'],
      12,
      20,
    );
    const second = await summarizer.summarize({
      previousSummary: first.content,
      messages: later,
      maxSummaryTokens: 120,
    });
    const lines = second.content.split('\n');
    const lineOf = (text: string) => lines.findIndex((line) => line.includes(text));
    expect(lines[0]).toBe('[2024-05-08]');
    expect(lineOf('KD2QXR')).toBe(1);
    expect(lineOf('2024-06-14')).toBeGreaterThan(lineOf('KD2QXR'));
    expect(lineOf('[2024-05-20]')).toBeGreaterThan(lineOf('2024-06-14'));
    expect(lines.slice(lineOf('[2024-05-20]') + 1)).toEqual([
      'user: My new repeater runs on 146.52 MHz at Lake Placid.',
    ]);
    expect(second.outputTokens).toBeLessThanOrEqual(120);
  });

  it('keeps the language of the conversation', async () => {
    const german = messages([
      'Hallo!',
      'Hallo, wie kann ich helfen?',
      'Ich heiße Jonas und mein Rufzeichen ist DL1ABC.',
      'Danke, Jonas.',
    ]);
    const result = await summarizer.summarize({ messages: german, maxSummaryTokens: 60 });
    expect(result.content).toContain('Ich heiße Jonas und mein Rufzeichen ist DL1ABC.');
    expect(result.content).not.toContain('Hallo!');
  });

  it('is deterministic and reports the tokens an LLM prompt would have cost', async () => {
    const a = await summarizer.summarize({ messages: chat, maxSummaryTokens: 80 });
    const b = await summarizer.summarize({ messages: chat, maxSummaryTokens: 80 });
    expect(a).toEqual(b);
    expect(a.summarizer).toBe('extractive@1');
    expect(a.inputTokens).toBeGreaterThan(counter.countText(chat.map((message) => message.content).join(' ')));
  });

  it('cuts an overlong sentence instead of letting it crowd out everything else', async () => {
    const long = messages(['Log dump: ' + 'sensor 42 reading 17.5 ok, '.repeat(200), 'My node id is !b7c8d9e0.']);
    const result = await summarizer.summarize({ messages: long, maxSummaryTokens: 100 });
    expect(result.content).toContain('!b7c8d9e0');
    expect(result.content).toContain('…');
  });

  describe('with facts to keep', () => {
    const said = (seq: number) => ({ seq, createdAt: new Date(Date.UTC(2024, 4, 8, 10, seq)).toISOString() });

    it('writes them as lines ahead of sentences and leaves out a sentence that only repeats them', async () => {
      const result = await summarizer.summarize({
        messages: messages([
          'I am Dana Okafor, callsign KD2QXR.',
          'Noted.',
          'Signal from Marcy: SNR -8.25 dB, RSSI -116 dBm via PINE-KNOB.',
        ]),
        keep: [
          { text: 'name: Dana Okafor', ...said(1) },
          { text: 'callsign: KD2QXR', ...said(1) },
        ],
        maxSummaryTokens: 200,
      });

      expect(result.content).toBe(
        '[2024-05-08]\n- name: Dana Okafor\n- callsign: KD2QXR\nuser: Signal from Marcy: SNR -8.25 dB, RSSI -116 dBm via PINE-KNOB.',
      );
    });

    it('keeps a fact the previous summary carries when newer facts and sentences no longer all fit', async () => {
      const previousSummary = '[2024-05-08]\n- radio mentor: Ilse Varga';
      const result = await summarizer.summarize({
        previousSummary,
        messages: messages(
          ['My main relay is a solar node called MOUNT-SOLAR on Mount Ruapehu Top Station, id !fa5aad08, 14 km out.'],
          5,
        ),
        keep: [
          { text: 'radio mentor: Ilse Varga', ...said(1) },
          { text: 'MOUNT-SOLAR node id: !fa5aad08', ...said(5) },
        ],
        maxSummaryTokens: 24,
      });

      expect(result.content).toContain('- radio mentor: Ilse Varga');
      expect(counter.countText(result.content)).toBeLessThanOrEqual(24);
      expect(result.content).not.toContain('Top Station');
    });

    it('leaves out a kept fact that a chosen sentence already states, and what repeats a superseded statement', async () => {
      const result = await summarizer.summarize({
        previousSummary: '[2024-05-08]\nuser: the trip starts 2 June.',
        messages: messages(['planning the Tongariro Northern Circuit, starting 8 April, about 43 km in 3 days.'], 3),
        keep: [{ text: 'trip date: 8 April', ...said(3) }],
        drop: ['the trip starts 2 June.'],
        maxSummaryTokens: 200,
      });

      expect(result.content).toBe(
        '[2024-05-08]\nuser: planning the Tongariro Northern Circuit, starting 8 April, about 43 km in 3 days.',
      );
    });
  });
});
