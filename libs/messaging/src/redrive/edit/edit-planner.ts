import { MessageHeaders } from '../../envelope/message-headers';
import { EventDefinition } from '../../envelope/event-definition';
import { KeySecret } from '../../failure/key-secret';
import { MessagingTopology } from '../../topology/messaging-topology';
import { DeadLetterBackend } from '../dead-letter-backend.interface';
import { describeRecord } from '../dead-letter-record';
import { MessageEditRefusedError } from '../errors/message-edit-refused.error';
import { RedrivePlanStaleError } from '../errors/redrive-plan-stale.error';
import { RedriveLimits } from '../redrive-limits';
import { RedrivePlan, sealPlan } from '../redrive-plan';
import { checkRecords, deriveRoute } from '../redrive-route';
import { restoreKey } from '../restore-key';
import { diffHashOf } from './edit-diff';
import { editDiffOf, parseJson } from './edit-diff-of';
import { lockedHeaders } from './edit-headers';
import { checkEditSchema } from './edit-schema';
import { MessageEditRequest, PlanEdit } from './message-edit';

/** What an edit is planned with, besides the request. */
export interface EditPlanningContext {
  readonly backend: DeadLetterBackend;
  readonly topology?: MessagingTopology;
  readonly keySecret?: KeySecret;
  /** The event definitions edited payloads are checked with. */
  readonly events: readonly EventDefinition[];
  /** The headers a redriven copy carries besides the library's: the only ones an edit may change. */
  readonly carryHeaders: readonly string[];
  /** The editor the plan names (`plannedBy`). */
  readonly actor: string;
  /** When the plan is made, ms since the epoch. */
  readonly now: number;
  readonly maxBytes?: number;
}

/**
 * An edit plan (`RedriveService.planEdit()` without its audit entry): reads the one dead letter (settling
 * nothing), checks that it can go back (a dead letter of the route, its key restorable), refuses locked
 * headers, a payload that is not JSON or that the event's schema refuses, and seals a plan of action
 * `edit` whose `edit` holds the edited payload, the header changes and their diff.
 */
export async function buildEditPlan(
  request: MessageEditRequest,
  context: EditPlanningContext,
): Promise<RedrivePlan> {
  const { backend } = context;
  const { source, messageId } = request;
  const refuse = (reason: ConstructorParameters<typeof MessageEditRefusedError>[2], detail: string) =>
    new MessageEditRefusedError(source, messageId, reason, detail);
  const route = deriveRoute(backend.kind, source, context.topology);
  const changes = request.headers ?? {};
  const locked = lockedHeaders(changes, context.carryHeaders);
  if (locked.length > 0) throw refuse('LOCKED_HEADER', locked.join('; '));
  if (Buffer.byteLength(request.payload, 'utf8') > RedriveLimits.MAX_EDIT_BYTES) {
    throw refuse('TOO_LARGE', `the edited payload is above ${RedriveLimits.MAX_EDIT_BYTES} bytes`);
  }
  const parsed = parseJson(request.payload);
  if (!parsed) throw refuse('NOT_JSON', 'the edited payload is not JSON');
  const record = await backend.peekAt(source, request.position, context.maxBytes);
  if (!record || (record.wire.headers[MessageHeaders.ID] ?? null) !== messageId) {
    throw new RedrivePlanStaleError(source, `message ${messageId} is no longer at the position given`);
  }
  checkRecords(source, route, [record]);
  restoreKey(record.wire, context.keySecret); // a message that cannot go back is not edited either
  const schema = checkEditSchema(context.events, record.wire.headers, parsed.value);
  if (schema.kind === 'invalid')
    throw refuse('SCHEMA', `the event's schema refuses it at ${schema.issues.join(', ')}`);
  if (schema.kind === 'unknown' && request.withoutSchema !== true) {
    throw refuse('NO_SCHEMA', `${schema.detail}; plan it unvalidated only on purpose (withoutSchema)`);
  }
  const diff = editDiffOf(record.wire, parsed.value, changes);
  if (diff.length === 0) throw refuse('NO_CHANGE', 'the edit changes neither the payload nor a header');
  const message = describeRecord(record);
  const changed = new Set(diff.map((change) => change.path));
  const headers = Object.fromEntries(
    Object.keys(changes)
      .sort()
      .filter((name) => changed.has(`header:${name}`))
      .map((name) => [name, changes[name]]),
  );
  const edit: PlanEdit = {
    messageId,
    payload: JSON.stringify(parsed.value),
    headers,
    diff,
    diffHash: diffHashOf(messageId, message.fingerprint, diff),
    validated: schema.kind === 'valid' ? 'schema' : 'none',
  };
  const [info] = await backend.list([source]);
  return sealPlan({
    version: 2,
    transport: backend.kind,
    plannedBy: context.actor,
    source,
    target: route.target,
    group: route.group,
    createdAt: new Date(context.now).toISOString(),
    depth: info?.depth ?? 1,
    messages: [message],
    action: 'edit',
    selection: { by: 'ids', messageIds: [messageId] },
    edit,
  });
}
