import { z } from 'zod';
import { RedriveApproval } from './redrive-approval';
import { RedrivePlan } from './redrive-plan';

const text = z.string().nullable();

const positionSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('queue'), index: z.number().int().nonnegative() }),
  z.object({
    kind: z.literal('partition'),
    partition: z.number().int().nonnegative(),
    offset: z.string().regex(/^\d+$/),
  }),
]);

const plannedMessageSchema = z.object({
  position: positionSchema,
  messageId: text,
  type: text,
  failureCategory: text,
  failureCode: text,
  attempts: z.number().int().nullable(),
  originDestination: text,
  lastFailureAt: text,
  redriveCount: z.number().int().nonnegative(),
  previousRedriveIds: z.array(z.string()),
  fingerprint: z.string(),
});

const planSchema = z.object({
  version: z.literal(2),
  transport: z.enum(['kafka', 'rabbitmq']),
  plannedBy: z.string().min(1),
  source: z.string().min(1),
  target: z.string(),
  group: z.string(),
  createdAt: z.string(),
  depth: z.number().int().nonnegative(),
  messages: z.array(plannedMessageSchema),
  action: z.enum(['redrive', 'discard', 'edit']).optional(),
  edit: z
    .object({
      messageId: z.string().min(1),
      payload: z.string(),
      headers: z.record(z.string(), z.string().nullable()),
      diff: z.array(
        z.object({
          path: z.string(),
          op: z.enum(['add', 'remove', 'replace']),
          before: z.string().optional(),
          after: z.string().optional(),
        }),
      ),
      diffHash: z.string(),
      validated: z.enum(['schema', 'none']),
    })
    .optional(),
  selection: z
    .discriminatedUnion('by', [
      z.object({ by: z.literal('ids'), messageIds: z.array(z.string()) }),
      z.object({
        by: z.literal('filter'),
        category: z.string().optional(),
        code: z.string().optional(),
        type: z.string().optional(),
        olderThanMinutes: z.number().nonnegative().optional(),
      }),
    ])
    .optional(),
  skipped: z.array(z.object({ message: plannedMessageSchema, reason: z.string() })).optional(),
  kept: z.array(plannedMessageSchema).optional(),
  notFound: z.array(z.string()).optional(),
  cutOff: z
    .object({
      reason: z.literal('byte-budget'),
      budgetBytes: z.number().int().positive(),
      notRead: z.number().int().positive(),
    })
    .optional(),
  bulk: z
    .object({
      store: z.string().regex(/^[0-9a-f-]{36}$/),
      taken: z.number().int().nonnegative(),
      kept: z.number().int().nonnegative(),
      skipped: z.number().int().nonnegative(),
      digest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
      byCode: z.record(z.string(), z.number().int().nonnegative()),
    })
    .optional(),
  hash: z.string(),
});

const approvalSchema = z.object({
  version: z.literal(2),
  planHash: z.string(),
  approver: z.string(),
  nonce: z.string().regex(/^[A-Za-z0-9_-]{22}$/),
  approvedAt: z.string(),
  expiresAt: z.string(),
  signature: z.string(),
});

/** Reads a plan written as JSON (e.g. by `nest-messaging dlq plan --out`). Throws a `ZodError` if it is not one. */
export function parseRedrivePlan(json: unknown): RedrivePlan {
  return planSchema.parse(json);
}

/** Reads an approval written as JSON (e.g. by `nest-messaging dlq approve --out`). */
export function parseRedriveApproval(json: unknown): RedriveApproval {
  return approvalSchema.parse(json);
}
