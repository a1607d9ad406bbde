import { InspectedDeadLetter, DeadLetterPayload } from '../../redrive/inspected-dead-letter';
import { PlanEdit } from '../../redrive/edit/message-edit';
import { RedrivePlan } from '../../redrive/redrive-plan';
import { positionParam } from './position-param';
import { html, Html } from './html';
import { csrfField, headRow, PageContext } from './layout';

/**
 * The dead-letter page's "Edit and retry" form, for a person who may plan and read payloads, when the whole
 * payload was read (a truncated one cannot be edited here: use the CLI).
 */
export function editSection(
  context: PageContext,
  queue: string,
  letter: InspectedDeadLetter,
  payload: DeadLetterPayload,
): Html {
  const m = letter.message;
  if (!m.messageId) return html``;
  if (payload.truncated) {
    return html`<h2 id="edit">Edit and retry</h2>
      <p class="muted">
        The payload is larger than the page shows: edit it with <code>nest-messaging dlq edit</code>.
      </p>`;
  }
  const action = `${context.base}/dead-letters/${encodeURIComponent(queue)}/messages/${encodeURIComponent(m.messageId)}/edit?at=${positionParam(m.position)}`;
  return html`<h2 id="edit">Edit and retry</h2>
    <p class="muted">
      Plans an edit: another person approves its diff; executing publishes the edited copy (same message id)
      and archives this one. Headers: one <code>name=value</code> a line (a name alone removes it); only
      headers the redriven copy carries, never <code>msg.*</code>, trace or broker headers.
    </p>
    <form method="post" action="${action}" data-testid="edit-form">
      ${csrfField(context)}
      <label for="edit-payload">Edited payload (JSON)</label>
      <textarea id="edit-payload" name="payload" rows="10" cols="80" class="mono">${payload.text}</textarea>
      <label for="edit-headers">Header changes</label>
      <textarea id="edit-headers" name="headers" rows="3" cols="80" class="mono"></textarea>
      <label
        ><input type="checkbox" name="withoutSchema" /> Plan it even if no schema of its type is known</label
      >
      <button type="submit">Plan edit</button>
    </form>`;
}

/** An edit plan's facts: how the payload was checked, where the copy and the original go, the diff's hash. */
export function editFacts(plan: RedrivePlan, edit: PlanEdit): Html {
  return html`<dt>Action</dt>
    <dd data-testid="plan-action">
      edit: publish the edited copy of ${edit.messageId} to ${plan.target}, archive the original in
      ${plan.source}.archive
    </dd>
    <dt>Schema</dt>
    <dd data-testid="edit-validated" data-validated="${edit.validated}">
      ${
        edit.validated === 'schema'
          ? 'the edited payload passed the schema of its event type and version'
          : html`<strong>NOT checked against a schema</strong> (no definition of its type was known)`
      }
    </dd>
    <dt>Diff hash</dt>
    <dd class="mono" data-testid="diff-hash">${edit.diffHash}</dd>`;
}

/** The whole diff the approver signs: one row per change, values as JSON (headers as text). */
export function diffSection(edit: PlanEdit): Html {
  return html`<h2 id="diff">Diff (what the approval signs)</h2>
    <table aria-labelledby="diff" data-testid="edit-diff">
      ${headRow(['Change', 'Where', 'Before', 'After'])}
      <tbody>
        ${edit.diff.map(
          (change) =>
            html`<tr data-testid="diff-row">
              <td>${change.op}</td>
              <td class="mono">${change.path || '(whole payload)'}</td>
              <td class="mono">${change.before ?? ''}</td>
              <td class="mono">${change.after ?? ''}</td>
            </tr>`,
        )}
      </tbody>
    </table>`;
}
