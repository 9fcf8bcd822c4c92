import {
  compactionPresets,
  compactionSettingsForBudget,
  contextPolicies,
  type CompactionSettings,
  type ContextDefaults,
  type ContextPolicy,
  type RecallMode,
} from '@mnemo/core';

/**
 * Policy names the CLI accepts: core's context policies, plus `meshai`, which is the `summary` context
 * policy run with `compactionPresets.meshai` (the founding bot: keep the last 4 exchanges verbatim,
 * re-summarize after 8 new messages, summary ≤ 300 tokens).
 */
export const cliPolicies = [...contextPolicies, 'meshai'] as const;

/** One of {@link cliPolicies}. */
export type CliPolicy = (typeof cliPolicies)[number];

/** The context policy that builds a CLI policy's requests (`meshai` → `summary`). */
export function contextPolicyOf(policy: CliPolicy): ContextPolicy {
  return policy === 'meshai' ? 'summary' : policy;
}

/** True for the policies that send the rolling summary (`summary`, `hybrid`, `meshai`), i.e. whose requests compaction pays for. */
export function usesSummary(policy: CliPolicy): boolean {
  const contextPolicy = contextPolicyOf(policy);
  return contextPolicy === 'summary' || contextPolicy === 'hybrid';
}

/**
 * The compaction settings the CLI runs a policy with: the `meshai` preset for `meshai`, otherwise core's
 * `compactionSettingsForBudget` for the budget (core's defaults when no budget is given).
 */
export function compactionSettingsFor(
  policy: CliPolicy | undefined,
  maxTokens: number | undefined,
): Partial<CompactionSettings> {
  if (policy === 'meshai') return compactionPresets.meshai;
  return maxTokens === undefined ? {} : compactionSettingsForBudget(maxTokens);
}

/**
 * The engine defaults a long-running command (`serve`, `mcp`) builds every context with: the configured
 * policy (`MNEMO_POLICY`), budget (`MNEMO_MAX_TOKENS`, default the library's 2,000), recall (`MNEMO_RECALL`) and window (the
 * library derives the compaction thresholds from that budget), and the meshai preset when it is chosen.
 * One function, so `serve`, its proxy, `worker` and `mcp` agree.
 */
export function engineDefaultsOf(context: {
  readonly policy?: CliPolicy;
  readonly maxTokens: number;
  readonly windowTurns: number;
  readonly recall: RecallMode;
}): {
  context: Partial<ContextDefaults>;
  compactionSettings: Partial<CompactionSettings>;
} {
  return {
    context: {
      maxTokens: context.maxTokens,
      windowTurns: context.windowTurns,
      recall: context.recall,
      ...(context.policy === undefined ? {} : { policy: contextPolicyOf(context.policy) }),
    },
    // createMemory already scales compaction to `context.maxTokens`; only the meshai preset is extra here.
    compactionSettings: context.policy === 'meshai' ? compactionPresets.meshai : {},
  };
}
