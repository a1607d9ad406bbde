import { MessagePosition, RedrivePlan } from '../../redrive/redrive-plan';
import { printable } from '../../common/printable';
import { cutOffText } from '../../redrive/plan-contents';
import { describeSelection } from '../../redrive/plan-selection';
import { table } from './table';
import { formatBulkPlan } from './bulk-format';
import { PlanEdit } from '../../redrive/edit/message-edit';
import { archiveOf } from '../../redrive/dead-letter-archive';

/** A position as people read it: `#0` in a queue, `p2@17` in a Kafka partition. */
export function positionText(position: MessagePosition): string {
  return position.kind === 'queue' ? `#${position.index}` : `p${position.partition}@${position.offset}`;
}

/** A plan, for people: what would move where, and any message that was redriven before. */
export function formatPlan(plan: RedrivePlan, stage: 'dry run' | 'approval' = 'dry run'): string[] {
  const group = plan.group ? ` (group ${plan.group})` : '';
  const route = printable(
    `${plan.transport}: ${plan.source} -> ${plan.target || '(no target)'}${group}, planned by ${plan.plannedBy}`,
  );
  if (plan.edit) return formatEditPlan(plan, plan.edit, route, stage);
  const verb = plan.action === 'discard' ? 'discard (archive)' : 'redrive';
  const lines =
    stage === 'dry run'
      ? [
          `Dry run on ${route}`,
          `${plan.bulk?.taken ?? plan.messages.length} of ${plan.depth} waiting message(s) would be ${plan.action === 'discard' ? 'discarded into the archive' : 'redriven'}. Nothing was changed.`,
        ]
      : [
          `Plan on ${route}, made ${plan.createdAt}`,
          `${plan.bulk?.taken ?? plan.messages.length} message(s) to ${verb}.`,
        ];
  if (plan.selection) lines.push(printable(`Selected by ${describeSelection(plan.selection)}.`));
  for (const skipped of plan.skipped ?? []) {
    lines.push(
      printable(
        `Skipped ${skipped.message.messageId ?? '(no id)'} at ${positionText(skipped.message.position)}: ${skipped.reason}`,
      ),
    );
  }
  if (plan.cutOff) {
    lines.push(`${cutOffText(plan.cutOff)}; the plan covers only messages it read.`);
  }
  if (plan.notFound?.length) {
    lines.push(printable(`Not found in ${plan.source}: ${plan.notFound.join(', ')}.`));
  }
  if (plan.kept?.length) {
    lines.push(
      `${plan.kept.length} message(s) between them stay: re-parked at the end of ${plan.source}, in order.`,
    );
  }
  if (plan.bulk) return [...lines, ...formatBulkPlan(plan.bulk), '', `Plan hash: ${plan.hash}`];
  if (plan.messages.length === 0) return lines;
  const rows = plan.messages.map((m) => [
    positionText(m.position),
    m.messageId ?? '(none)',
    m.type ?? '(none)',
    `${m.failureCategory ?? '?'}/${m.failureCode ?? '?'}`,
    m.attempts === null ? '?' : String(m.attempts),
    m.redriveCount === 0 ? '-' : String(m.redriveCount),
  ]);
  lines.push('', ...table(['POSITION', 'MESSAGE ID', 'TYPE', 'FAILURE', 'ATTEMPTS', 'REDRIVES'], rows));
  const looping = plan.messages.filter((m) => m.redriveCount > 0);
  if (looping.length > 0) {
    lines.push(
      '',
      `Warning: ${looping.length} message(s) were redriven before and failed again (a redrive loop?). ` +
        `Earlier redrive ids: ${printable([...new Set(looping.flatMap((m) => m.previousRedriveIds))].join(', '))}.`,
    );
  }
  lines.push('', `Plan hash: ${plan.hash}`);
  return lines;
}

/**
 * An edit plan, for people: the message, how its payload was checked, and the whole diff the approver
 * signs (values as JSON, printable).
 */
function formatEditPlan(
  plan: RedrivePlan,
  edit: PlanEdit,
  route: string,
  stage: 'dry run' | 'approval',
): string[] {
  const [message] = plan.messages;
  const lines = [
    stage === 'dry run' ? `Edit (dry run) on ${route}` : `Edit plan on ${route}, made ${plan.createdAt}`,
    printable(
      `Message ${edit.messageId} (${message.type ?? 'no type'}) at ${positionText(message.position)}, failed ` +
        `${message.failureCategory ?? '?'}/${message.failureCode ?? '?'}.`,
    ),
    edit.validated === 'schema'
      ? 'The edited payload passed the schema of its event type and version.'
      : 'WARNING: the edited payload was NOT checked against a schema (no definition of its type was known).',
    `Executing publishes the edited copy to ${plan.target} (same message id, msg.edit-of) and archives the ` +
      `original in ${archiveOf(plan.source)}.`,
    '',
    `Diff (${edit.diff.length} change(s)):`,
    ...edit.diff.map((change) =>
      printable(
        `  ${change.op.padEnd(7)} ${change.path || '(whole payload)'}: ` +
          (change.op === 'add'
            ? `${change.after}`
            : change.op === 'remove'
              ? `${change.before}`
              : `${change.before} -> ${change.after}`),
      ),
    ),
    '',
    `Diff hash: ${edit.diffHash}`,
    `Plan hash: ${plan.hash}`,
  ];
  if (stage === 'dry run') lines.splice(2, 0, 'Nothing was changed.');
  return lines;
}
