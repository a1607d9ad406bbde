import { Audience, readNotifications, schedulePosts, sleep, waitForDelivery } from './blog-scenario';
import { ScenarioStack } from './demo-scenarios';
import { duration, seconds } from './format';
import { colours, Progress } from './progress';

/* The demo's third step: a scheduled message end to end (a post announced later, one deleted before). */

/** How far ahead the step's posts are announced: long enough to see that nothing comes before, yet short. */
const PUBLISH_AHEAD_MS = 3_000;
/** How long after the kept post's notifications the demo still looks for the deleted one's. */
const AFTER_MS = 1_000;
const DELIVERY_TIMEOUT_MS = 60_000;

const c = colours();

/** `passed`: the kept post was announced at its time (not before), to each subscriber once; the other never. */
export interface ScheduledResult {
  readonly passed: boolean;
}

/**
 * Scenario 3: the author writes two posts with `publishAt` a few seconds ahead and deletes the second at
 * once. post-service schedules each `PostCreated` in the post's transaction and cancels the second in the
 * delete's; the relay publishes the first at `publishAt`, and subscribe-service notifies then.
 */
export async function scheduledScenario(
  stack: ScenarioStack,
  audience: Audience,
  out: Progress,
): Promise<ScheduledResult> {
  out.line(
    c.bold(
      `Scenario 3, scheduled: two posts announced in ${seconds(PUBLISH_AHEAD_MS)}, the second deleted before`,
    ),
  );
  const scheduled = await schedulePosts(stack.client, audience.authorId, PUBLISH_AHEAD_MS, 'scheduled');
  const { announced, deleted, publishAt } = scheduled;
  const accepted = Boolean(announced && deleted) && scheduled.deleteStatus === 204;
  out.line(
    `  ${accepted ? c.green('✔') : c.red('✘')} POST /posts with publishAt ${publishAt.toISOString()}: ` +
      `${scheduled.createStatuses.join(', ')}; DELETE the second: ${scheduled.deleteStatus} ` +
      '(its scheduled PostCreated cancelled in the same transaction).',
  );
  if (!announced || !deleted || !accepted) return { passed: false };

  let early = 0;
  while (Date.now() < publishAt.getTime() - 200) {
    early += [...(await readNotifications(stack.client, audience.subscriberIds)).values()]
      .flat()
      .filter((n) => n.postId === announced.id || n.postId === deleted.id).length;
    out.bar(
      'waiting  ',
      0,
      audience.subscriberIds.length,
      `due in ${seconds(publishAt.getTime() - Date.now())}`,
    );
    await sleep(200);
  }
  const check = await waitForDelivery(stack.client, audience, [announced.id], {
    timeoutMs: DELIVERY_TIMEOUT_MS,
    onProgress: (p) => out.bar('delivered', p.delivered, p.expected, 'notifications'),
  });
  await sleep(AFTER_MS);
  const all = [...(await readNotifications(stack.client, audience.subscriberIds)).values()].flat();
  const kept = all.filter((n) => n.postId === announced.id);
  const ofDeleted = all.filter((n) => n.postId === deleted.id).length;
  const lateness = kept.map((n) => new Date(n.notifiedAt).getTime() - publishAt.getTime());
  const onTime = kept.length > 0 && Math.min(...lateness) >= 0;
  const passed = check.exactlyOnce && early === 0 && onTime && ofDeleted === 0;
  out.endBar(
    `  ${check.exactlyOnce && early === 0 && onTime ? c.green('✔') : c.red('✘')} ` +
      `${check.delivered}/${check.expected} notifications of the kept post, none before publishAt; the first ` +
      `${duration(Math.min(...lateness))} after it, the last ${duration(Math.max(...lateness))}.`,
  );
  out.line(
    `  ${ofDeleted === 0 ? c.green('✔') : c.red('✘')} ${ofDeleted} notifications of the deleted post ` +
      `${duration(AFTER_MS)} after the kept one's.`,
  );
  return { passed };
}
