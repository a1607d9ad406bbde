import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PostCreated } from '@app/contracts';
import { startWireWitness, WireWitness } from '../../faults/support/wire-witness';
import { ClusterAccess, ClusterStack } from './cluster-stack';
import { expectNothingLost, failoverRun, failoverTooSlow, NodeFault, renderFailover } from './failover-run';

/** A cluster of a suite's own, and the faults a failover run injects into it. */
export interface ClusterUnderTest {
  readonly access: ClusterAccess;
  /** The fault to inject, chosen once the stack runs (e.g. at the current leader). */
  fault(): Promise<NodeFault>;
  destroy(): Promise<void>;
}

/**
 * Issue 19: post-service and subscribe-service on a three-node cluster under steady load while a node
 * fails; afterwards every answered post is notified exactly once per subscriber, in order per author, and
 * nothing is in the DLQ. The time from the fault to the first delivery and to full catch-up is printed, and
 * held to a generous bound (`failoverTooSlow`): a failover that never delivers fails.
 */
export function failoverSuite(broker: string, startCluster: () => Promise<ClusterUnderTest>): void {
  describe(`Failover on a three-node ${broker} cluster under load`, () => {
    let cluster: ClusterUnderTest | undefined;
    let stack: ClusterStack | undefined;
    let witness: WireWitness | undefined;
    const logDir = mkdtempSync(path.join(os.tmpdir(), `cluster-${broker.toLowerCase()}-`));
    const log = (line: string) => process.stdout.write(`[cluster ${broker}] ${line}\n`);

    beforeAll(async () => {
      const startedAt = Date.now();
      cluster = await startCluster();
      log(`cluster up in ${Date.now() - startedAt} ms; service logs in ${logDir}`);
      stack = await ClusterStack.start(cluster.access, logDir);
      witness = await startWireWitness(cluster.access.transport, cluster.access, PostCreated.destination);
      log(`stack up after ${Date.now() - startedAt} ms`);
    }, 600_000);

    afterAll(async () => {
      const startedAt = Date.now();
      await witness?.stop().catch(() => undefined);
      await stack?.stop().catch(() => undefined);
      await cluster?.destroy();
      log(`torn down in ${Date.now() - startedAt} ms`);
    }, 180_000);

    // claim: C-53, C-58
    it('loses nothing, notifies every subscriber once, in order, when a leader node fails', async () => {
      const figures = await failoverRun(stack!, cluster!.access, witness!, await cluster!.fault(), log);
      process.stdout.write(`\n${renderFailover(broker, figures)}\n`);
      expectNothingLost(figures);
      expect(failoverTooSlow(figures)).toEqual([]);
    }, 600_000);
  });
}
