import { describeSelection } from '../../redrive/plan-selection';
import { cutOffText } from '../../redrive/plan-contents';
import { RedrivePlan } from '../../redrive/redrive-plan';
import { ConsolePlan, ConsolePlanState, describeState } from '../plans/console-plan';
import { positionOf } from './dead-letter-views';
import { diffSection, editFacts } from './edit-views';
import { html, Html } from './html';
import { timeOf } from './time';
import { csrfField, headRow, notice, page, PageContext } from './layout';

/** What a plan does and how its messages were chosen (a selection plan), as facts of its page. */
function selectionFacts(plan: RedrivePlan): Html {
  return html`<dt>Action</dt>
    <dd data-testid="plan-action">
      ${plan.action === 'discard' ? `discard: archive in ${plan.target}, never to run` : 'redrive'}
    </dd>
    <dt>Selected by</dt>
    <dd data-testid="plan-selection">${describeSelection(plan.selection)}</dd>
    ${
      plan.notFound?.length
        ? html`<dt>Not found</dt>
            <dd data-testid="not-found">
              ${plan.notFound.length} picked id(s) not in ${plan.source} (redriven or discarded since, or
              deeper than a plan reads): ${plan.notFound.join(', ')}
            </dd>`
        : ''
    }
    ${
      plan.kept?.length
        ? html`<dt>Kept</dt>
            <dd>
              ${plan.kept.length} message(s) between them stay: re-parked at the end of ${plan.source}, in
              order
            </dd>`
        : ''
    }`;
}

/** The messages a selection took that cannot be redriven: left in the DLQ; discard them with a plan of their own. */
function skippedSection(plan: RedrivePlan): Html {
  if (!plan.skipped?.length) return html``;
  return html`<h2 id="skipped">Skipped: cannot be redriven (they stay in ${plan.source})</h2>
    <table aria-labelledby="skipped">
      ${headRow(['#Position', 'Message id', 'Failure', 'Why'])}
      <tbody>
        ${plan.skipped.map(
          (s) =>
            html`<tr data-testid="skipped">
              <td class="num">${positionOf(s.message.position)}</td>
              <td class="mono">${s.message.messageId ?? '(none)'}</td>
              <td>${s.message.failureCategory ?? ''}/${s.message.failureCode ?? ''}</td>
              <td>${s.reason}</td>
            </tr>`,
        )}
      </tbody>
    </table>`;
}

/** What the signed-in user may do with a plan now. */
export interface PlanActions {
  readonly approve: boolean;
  readonly execute: boolean;
}

/** Every plan made in this console, newest first. */
export function redrivePlansPage(
  context: PageContext,
  plans: readonly ConsolePlan[],
  states: readonly ConsolePlanState[],
): string {
  return page(
    context,
    'Redrive',
    html`<p class="muted">
        Plan a redrive from a <a href="${context.base}/dead-letters">dead-letter queue</a>; a second person
        approves it; an operator executes it.
      </p>
      <table aria-label="Redrive plans">
        <thead>
          <tr>
            <th scope="col">Plan</th>
            <th scope="col">Source → target</th>
            <th scope="col" class="num">Messages</th>
            <th scope="col">Planned by</th>
            <th scope="col">State</th>
          </tr>
        </thead>
        <tbody>
          ${
            plans.length === 0
              ? html`<tr>
                  <td colspan="5" class="muted">No plans yet.</td>
                </tr>`
              : ''
          }
          ${plans.map(
            (p, i) =>
              html`<tr data-state="${states[i].kind}">
                <td><a href="${context.base}/redrive/plans/${p.id}">${timeOf(p.plan.createdAt)}</a></td>
                <td>${p.plan.source} → ${p.plan.target || '–'}</td>
                <td class="num">${p.plan.messages.length}</td>
                <td>${p.plan.plannedBy}</td>
                <td>${describeState(states[i])}</td>
              </tr>`,
          )}
        </tbody>
      </table>`,
    '/redrive',
    { refresh: true },
  );
}

/**
 * One plan: where it stands, what it would move, its approval, its result, and the buttons the user may
 * press now (Approve while it waits, Execute while its approval holds; none once stale, expired or run).
 * A refusal is shown to the person it refused only.
 */
export function redrivePlanPage(
  context: PageContext,
  entry: ConsolePlan,
  state: ConsolePlanState,
  actions: PlanActions,
  flash?: { kind: 'error' | 'ok'; text: string },
): string {
  const { plan, approval, result } = entry;
  const mine = context.user ? entry.refusals[context.user.name] : undefined;
  const over = state.kind === 'stale' || state.kind === 'expired';
  const action = (verb: 'approve' | 'execute', label: string): Html =>
    html`<form method="post" action="${context.base}/redrive/plans/${entry.id}/${verb}" class="inline">
      ${csrfField(context)}<button type="submit">${label}</button>
    </form>`;
  return page(
    context,
    `${plan.edit ? 'Edit plan' : 'Redrive plan'}: ${plan.source}`,
    html`${flash ? notice(flash.kind, flash.text) : ''}
      ${mine && !flash ? notice('error', html`${mine.message} <small>(${mine.at})</small>`) : ''}
      ${over ? html`<p class="notice error" data-testid="plan-over">${describeState(state)}.</p>` : ''}
      <dl class="facts">
        <dt>State</dt>
        <dd data-testid="plan-state" data-state="${state.kind}">${describeState(state)}</dd>
        <dt>Source</dt>
        <dd>${plan.source}</dd>
        <dt>Target</dt>
        <dd>${plan.target || '–'} (group ${plan.group || '–'})</dd>
        <dt>Planned by</dt>
        <dd data-testid="planned-by">${plan.plannedBy} at ${timeOf(plan.createdAt)}</dd>
        <dt>Waiting when planned</dt>
        <dd>${plan.depth}</dd>
        ${
          plan.cutOff
            ? html`<dt>Not read</dt>
                <dd data-testid="plan-cut-off">
                  ${cutOffText(plan.cutOff)}: the plan covers only the messages read
                </dd>`
            : ''
        }
        <dt>Plan hash</dt>
        <dd class="mono">${plan.hash}</dd>
        ${plan.edit ? editFacts(plan, plan.edit) : selectionFacts(plan)}
        <dt>Approval</dt>
        <dd data-testid="approval">
          ${approval ? html`approved by ${approval.approver}, valid until ${timeOf(approval.expiresAt)}` : 'none yet: another person with the approver role approves'}
        </dd>
      </dl>
      ${skippedSection(plan)} ${plan.edit ? diffSection(plan.edit) : ''}
      <h2 id="messages">Messages (dry run: nothing was changed)</h2>
      <table aria-labelledby="messages">
        ${headRow(['#Position', 'Message id', 'Type', 'Failure', '#Attempts', '#Redrives', ...(result ? ['Fate'] : [])])}
        <tbody>
          ${plan.messages.map((m, i) => {
            const fate = result?.messages[i];
            return html`<tr>
              <td class="num">${positionOf(m.position)}</td>
              <td class="mono">${m.messageId ?? '(none)'}</td>
              <td>${m.type ?? ''}</td>
              <td>${m.failureCategory ?? ''}/${m.failureCode ?? ''}</td>
              <td class="num">${m.attempts ?? ''}</td>
              <td class="num">${m.redriveCount}</td>
              ${result ? html`<td>${fate?.status ?? ''}${fate?.error ? ` (${fate.error})` : ''}</td>` : ''}
            </tr>`;
          })}
        </tbody>
      </table>
      ${
        result
          ? html`<h2 id="result">Result</h2>
              <dl class="facts" aria-labelledby="result">
                <dt>Redrive id</dt>
                <dd class="mono" data-testid="redrive-id">${result.redriveId}</dd>
                <dt>
                  ${plan.action === 'discard' ? `Archived in ${plan.target}` : plan.edit ? 'Edited copy published' : 'Redriven'}
                </dt>
                <dd data-testid="redriven">${result.redriven}</dd>
                <dt>Left in ${result.source}</dt>
                <dd>${result.leftInSource}</dd>
              </dl>`
          : html`${actions.approve && state.kind === 'waiting' ? action('approve', 'Approve this plan') : ''}
            ${actions.execute && state.kind === 'approved' ? action('execute', plan.action === 'discard' ? 'Execute discard' : plan.edit ? 'Execute edit' : 'Execute redrive') : ''}`
      }`,
    '/redrive',
    { refresh: true },
  );
}
