import { describe, expect, it } from 'vitest';
import { buildSummarizePrompt } from './summarize-prompt.js';

const messages = [
  { seq: 3, role: 'user' as const, content: 'the trip now starts 30 May', createdAt: '2025-03-02T10:00:00.000Z' },
];

describe('buildSummarizePrompt', () => {
  it('folds the previous summary and the new messages, and says nothing of facts when none are given', () => {
    const [system, user] = buildSummarizePrompt({
      previousSummary: '[2025-03-01]\nuser: the trip starts 8 April.',
      messages,
      maxSummaryTokens: 150,
    });

    expect(system!.content).toContain('When a fact changed, keep only the new value.');
    expect(user!.content).toBe(
      'Existing summary:\n[2025-03-01]\nuser: the trip starts 8 April.\n\nNew messages:\n[2025-03-02]\nuser: the trip now starts 30 May\n\nUpdated summary:',
    );
  });

  it('lists the recorded facts the summary lacks and the superseded statements it still carries', () => {
    const [, user] = buildSummarizePrompt({
      previousSummary: '[2025-03-01]\n- name: Rosa\nuser: the trip starts 8 April.',
      messages,
      keep: [
        { text: 'name: Rosa', seq: 1, createdAt: '2025-03-01T10:00:00.000Z' },
        { text: 'trip date: 30 May', seq: 3, createdAt: '2025-03-02T10:00:00.000Z' },
      ],
      drop: ['the trip starts 8 April.', 'owns: a kayak'],
      maxSummaryTokens: 150,
    });

    expect(user!.content).toContain(
      'Recorded facts (keep each as a "- fact" line, before other material):\n- trip date: 30 May\n\n',
    );
    expect(user!.content).not.toContain(
      'Recorded facts (keep each as a "- fact" line, before other material):\n- name: Rosa',
    );
    expect(user!.content).toContain('No longer true (leave out):\n- the trip starts 8 April.\n\nNew messages:');
    expect(user!.content).not.toContain('kayak');
  });
});
