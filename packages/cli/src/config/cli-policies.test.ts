import { compactionPresets, contextPolicies } from '@mnemo/core';
import { describe, expect, it } from 'vitest';
import { cliPolicies, compactionSettingsFor, contextPolicyOf, usesSummary } from './cli-policies.js';

describe('cliPolicies', () => {
  it('adds meshai to the context policies and builds it with the summary policy', () => {
    expect(cliPolicies).toEqual([...contextPolicies, 'meshai']);
    expect(contextPolicyOf('meshai')).toBe('summary');
    expect(contextPolicyOf('window')).toBe('window');
    expect(cliPolicies.filter(usesSummary)).toEqual(['summary', 'hybrid', 'meshai']);
  });
});

describe('compactionSettingsFor', () => {
  it('uses the meshai preset for meshai whatever the budget', () => {
    expect(compactionSettingsFor('meshai', 150)).toBe(compactionPresets.meshai);
  });

  it('scales the thresholds to the budget for the other policies, and leaves core defaults without one', () => {
    expect(compactionSettingsFor('summary', 1000)).toEqual({
      triggerTokens: 650,
      verbatimTokens: 900,
      keepRecentTokens: 0,
      keepRecentTurns: 2,
      maxSummaryTokens: 140,
      maxSourceTokensPerRound: 6000,
      keepFacts: true,
    });
    expect(compactionSettingsFor(undefined, 50)).toMatchObject({
      triggerTokens: 65,
      verbatimTokens: 90,
      keepRecentTurns: 2,
      maxSummaryTokens: 16,
    });
    expect(compactionSettingsFor('token-window', undefined)).toEqual({});
  });
});
