import { Audience, readNotifications, schedulePosts, sleep, waitForDelivery } from './blog-scenario';
import { ScenarioStack } from './demo-scenarios';
import { duration, seconds } from './format';
import { colours, Progress } from './progress';

/* The demo's third step: scheduled messages end to end (posts announced later; one deleted, one edited). */

/** How far ahead the step's posts are announced: long enough to see that nothing comes before, yet short. */
const PUBLISH_AHEAD_MS = 3_000;
/** How long after the other posts' notifications the demo still looks for the deleted one's. */
const AFTER_MS = 1_000;
const DELIVERY_TIMEOUT_MS = 60_000;

const c = colours();

/**
 * `passed`: the kept and the edited post were announced at their time (not before), to each subscriber once,
 * the edited one as edited; the deleted one never.
 */
export interface ScheduledResult {
  readonly passed: boolean;
}

/**
 * Scenario 3: the author writes three posts with `publishAt` a few seconds ahead (the third a minute later),
 * deletes the second and edits the third (new title, `publishAt` like the others). post-service schedules
 * each `PostCreated` in the post's transaction, cancels the second in the delete's, replaces the third in the
 * edit's; the relay publishes at `publishAt`, and subscribe-service notifies then.
 */
export async function scheduledScenario(
  stack: ScenarioStack,
  audience: Audience,
  out: Progress,
): Promise<ScheduledResult> {
  out.line(
    c.bold(
      `Scenario 3, scheduled: three posts announced in ${seconds(PUBLISH_AHEAD_MS)}, ` +
        'one deleted and one edited before',
    ),
  );
  const scheduled = await schedulePosts(stack.client, audience.authorId, PUBLISH_AHEAD_MS, 'scheduled');
  const { announced, deleted, edited, publishAt } = scheduled;
  const accepted = scheduled.deleteStatus === 204 && scheduled.editStatus === 200;
  out.line(
    `  ${accepted ? c.green('✔') : c.red('✘')} POST /posts with publishAt ${publishAt.toISOString()}: ` +
      `${scheduled.createStatuses.join(', ')}; DELETE the second: ${scheduled.deleteStatus}; ` +
      `PATCH the third: ` +
      `${scheduled.editStatus} (each cancels the post's scheduled PostCreated in its transaction; the edit ` +
      'schedules a new one).',
  );
  if (!announced || !deleted || !edited || !accepted) return { passed: false };

  const ours = [announced.id, deleted.id, edited.id];
  let early = 0;
  while (Date.now() < publishAt.getTime() - 200) {
    early += [...(await readNotifications(stack.client, audience.subscriberIds)).values()]
      .flat()
      .filter((n) => ours.includes(n.postId)).length;
    out.bar(
      'waiting  ',
      0,
      2 * audience.subscriberIds.length,
      `due in ${seconds(publishAt.getTime() - Date.now())}`,
    );
    await sleep(200);
  }
  const check = await waitForDelivery(stack.client, audience, [announced.id, edited.id], {
    timeoutMs: DELIVERY_TIMEOUT_MS,
    onProgress: (p) => out.bar('delivered', p.delivered, p.expected, 'notifications'),
  });
  await sleep(AFTER_MS);
  const all = [...(await readNotifications(stack.client, audience.subscriberIds)).values()].flat();
  const told = all.filter((n) => n.postId === announced.id || n.postId === edited.id);
  const asEdited = told.filter((n) => n.postId === edited.id).every((n) => n.title === edited.title);
  const ofDeleted = all.filter((n) => n.postId === deleted.id).length;
  const lateness = told.map((n) => new Date(n.notifiedAt).getTime() - publishAt.getTime());
  const onTime = told.length > 0 && Math.min(...lateness) >= 0;
  const passed = check.exactlyOnce && early === 0 && onTime && asEdited && ofDeleted === 0;
  out.endBar(
    `  ${check.exactlyOnce && early === 0 && onTime && asEdited ? c.green('✔') : c.red('✘')} ` +
      `${check.delivered}/${check.expected} notifications of the kept and the edited post (titled ` +
      `"${edited.title}"${asEdited ? '' : c.red(', but not everywhere')}), none before publishAt; ` +
      'the first ' +
      `${duration(Math.min(...lateness))} after it, the last ${duration(Math.max(...lateness))}.`,
  );
  out.line(
    `  ${ofDeleted === 0 ? c.green('✔') : c.red('✘')} ${ofDeleted} notifications of the deleted post ` +
      `${duration(AFTER_MS)} after the others.`,
  );
  return { passed };
}
