import { z } from 'zod';
import { ReplayPlan } from './replay-plan';

const offset = z.string().regex(/^\d+$/);

const replayPlanSchema = z.strictObject({
  version: z.literal(2),
  kind: z.literal('replay'),
  transport: z.enum(['kafka', 'rabbitmq']),
  plannedBy: z.string().min(1),
  source: z.string().min(1),
  target: z.string().min(1),
  journal: z.string().min(1).optional(),
  group: z.string().min(1),
  createdAt: z.string(),
  window: z.discriminatedUnion('by', [
    z.strictObject({ by: z.literal('time'), from: z.string(), to: z.string() }),
    z.strictObject({ by: z.literal('offsets') }),
  ]),
  partitions: z.array(
    z.strictObject({ partition: z.number().int().nonnegative(), from: offset, to: offset }),
  ),
  records: z.number().int().nonnegative(),
  inbox: z.enum(['skip', 'reprocess']),
  ratePerSecond: z.number().int().positive(),
  replayId: z.string().min(1),
  hash: z.string(),
});

/**
 * Reads a replay plan written as JSON (by `nest-messaging replay plan --out`). Throws a `ZodError` if it is
 * not one; its hash is checked where it is approved and executed.
 */
export function parseReplayPlan(json: unknown): ReplayPlan {
  return replayPlanSchema.parse(json);
}
