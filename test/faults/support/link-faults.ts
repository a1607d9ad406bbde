import { sleep } from '../../../tools/demo/blog-scenario';
import { FaultProxy, Frame, FrameRule } from '../../harness/fault-proxy';
import { FaultKind, SeededRandom } from './fault-profile';
import { RunRelay, StackLinks, Transport } from './fault-stack';

/** An answer the proxies can lose after the other side acted, on one link. */
interface LostAnswer {
  readonly link: keyof StackLinks;
  readonly what: string;
  readonly rule: FrameRule;
}

/** How long a lost answer's rule waits for its frame (a service idle on that link meanwhile). */
const LOST_ANSWER_WAIT_MS = 30_000;

const commitAnswer = (f: Frame) => /^\s*commit/i.test(f.query ?? '');
/** PostgreSQL: the claim statement marks the batch before sent; MySQL/MariaDB: the mark of its own. */
const markAnswer = (f: Frame) => /set sent_at/i.test(f.query ?? '');
/** The logical relay's standby status update (CopyData 'r'): what it tells PostgreSQL is published. */
const statusUpdate = (f: Frame) => f.bytes[0] === 0x64 && f.bytes[5] === 0x72;

function lostAnswers(transport: Transport, relay: RunRelay): LostAnswer[] {
  const broker: LostAnswer[] =
    transport === 'kafka'
      ? [
          {
            link: 'broker',
            what: "a produce's answer dropped after the broker wrote it",
            rule: { direction: 'downstream', match: (f) => f.apiKey === 0, action: 'drop' },
          },
        ]
      : [
          {
            link: 'broker',
            what: 'a publisher confirm lost with the connection',
            rule: { direction: 'downstream', match: (f) => f.name === 'basic.ack', action: 'cut' },
          },
          {
            link: 'broker',
            what: "a consumer's ack lost with the connection",
            rule: { direction: 'upstream', match: (f) => f.name === 'basic.ack', action: 'cut' },
          },
        ];
  const relayAnswer: LostAnswer =
    relay === 'logical'
      ? {
          link: 'postDatabase',
          what: "the logical relay's status update lost with the replication connection",
          rule: { direction: 'upstream', match: statusUpdate, action: 'cut' },
        }
      : {
          link: 'postDatabase',
          what: "the answer to the relay's mark lost after it executed",
          rule: { direction: 'downstream', match: markAnswer, action: 'cut' },
        };
  return [
    ...broker,
    relayAnswer,
    {
      link: 'subscribeDatabase',
      what: "the answer to the consumer's COMMIT lost after it executed",
      rule: { direction: 'downstream', match: commitAnswer, action: 'cut' },
    },
  ];
}

/**
 * Injects one fault of the proxies on the stack's links (chaos mode) and lifts it again; says what it hit
 * and how. The link, the answer, the delay and the durations are drawn from `rng`.
 */
export async function injectLinkFault(
  kind: FaultKind,
  links: StackLinks,
  transport: Transport,
  rng: SeededRandom,
  relay: RunRelay = 'poll',
): Promise<{ target: string; detail: string }> {
  const linkName = rng.pick(Object.keys(links) as Array<keyof StackLinks>);
  const proxy = links[linkName];
  switch (kind) {
    case 'lost-answer': {
      const lost = rng.pick(lostAnswers(transport, relay));
      return { target: links[lost.link].name, detail: await loseAnswer(links[lost.link], lost) };
    }
    case 'link-cut':
      return { target: proxy.name, detail: `${proxy.cutAll()} connection(s) cut` };
    case 'link-delay': {
      const [delayMs, holdMs] = [rng.between(200, 1_500), rng.between(3_000, 8_000)];
      proxy.delay(delayMs);
      await sleep(holdMs);
      await proxy.heal();
      return { target: proxy.name, detail: `+${delayMs} ms each way for ${(holdMs / 1000).toFixed(1)} s` };
    }
    case 'black-hole': {
      const holdMs = rng.between(2_000, 6_000);
      const before = proxy.stats.cuts;
      proxy.blackHole();
      await sleep(holdMs);
      await proxy.heal();
      return {
        target: proxy.name,
        detail: `${(holdMs / 1000).toFixed(1)} s, then ${proxy.stats.cuts - before} connection(s) cut`,
      };
    }
    default:
      throw new Error(`${kind} is not a link fault`);
  }
}

/** Arms the rule and waits for its frame; lifts it if none came in time. */
async function loseAnswer(proxy: FaultProxy, lost: LostAnswer): Promise<string> {
  const hit = proxy.on(lost.rule).then(([frame]) => frame);
  const frame = await Promise.race([hit, sleep(LOST_ANSWER_WAIT_MS).then(() => undefined)]);
  if (frame) return `${lost.what} (${frame.request?.name ?? frame.name})`;
  await proxy.heal();
  return `${lost.what}: no such answer within ${LOST_ANSWER_WAIT_MS / 1000} s`;
}
