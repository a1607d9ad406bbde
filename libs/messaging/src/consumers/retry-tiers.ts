import { ResolvedMessagingOptions } from '../options/resolve-messaging-options';
import { retryTiers } from '../retry/retry-policy';
import { HandlerRegistry } from './handler-registry';

/**
 * The delay tiers a consumer group needs retry destinations for on `destination`, ascending: those of its
 * handlers' policies there and of the destination's default (every policy that may send one of its
 * messages to a retry destination).
 */
export function groupRetryTiers(
  registry: HandlerRegistry,
  options: ResolvedMessagingOptions,
  group: string,
  destination: string,
): number[] {
  const handlers = registry.destinationsOf(group).get(destination)?.values() ?? [];
  const policies = [...handlers].map((handler) => handler.policy);
  policies.push(options.retryDefaults.get(destination));
  const tiers = new Set<number>();
  for (const policy of policies) if (policy) retryTiers(policy).forEach((tier) => tiers.add(tier));
  return [...tiers].sort((a, b) => a - b);
}
