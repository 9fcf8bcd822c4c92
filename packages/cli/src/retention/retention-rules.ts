import type { Memory, RetentionOutcome, RetentionRules } from '@mnemo/core';
import type { CliConfig, CliRetentionConfig } from '../config/cli-config.js';

/** A tenant's retention rules from the CLI's settings: its own days (or `null`: forever), else the global days; its users' overrides. */
export function retentionRulesOf(retention: CliRetentionConfig, tenantId: string): RetentionRules {
  const tenant = retention.tenants[tenantId];
  const days = tenant?.maxAgeDays === undefined ? retention.maxAgeDays : tenant.maxAgeDays;
  const users = Object.fromEntries(
    Object.entries(tenant?.users ?? {}).map(([userId, userDays]) => [
      userId,
      userDays === null ? null : { maxAgeDays: userDays },
    ]),
  );
  return { tenantId, ...(days === undefined || days === null ? {} : { policy: { maxAgeDays: days } }), users };
}

/** The tenants a sweep visits: `default`, every API key's, and every one the retention settings name. */
export function retentionTenants(config: CliConfig): string[] {
  return [
    ...new Set([
      'default',
      ...(config.server?.apiKeys ?? []).map((key) => key.tenantId),
      ...Object.keys(config.retention?.tenants ?? {}),
    ]),
  ];
}

/** One sweep over every tenant with the configured rules; the outcomes of the users whose old messages it erased, by tenant. */
export async function sweepRetention(
  memory: Memory,
  config: CliConfig & { retention: CliRetentionConfig },
): Promise<{ tenantId: string; outcomes: RetentionOutcome[] }[]> {
  const results = [];
  for (const tenantId of retentionTenants(config))
    results.push({ tenantId, outcomes: await memory.applyRetention(retentionRulesOf(config.retention, tenantId)) });
  return results;
}
