import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { PostgresConsolePlanStore } from 'nest-reliable-messaging/console';
import { PostgresRedriveLedger, RedriveService } from 'nest-reliable-messaging/redrive';
import { PostCreated } from '@app/contracts';
import { OpsConsoleConfig } from './config/console.config';

/**
 * The admin side the console works through: the redrive service (admin broker credential), its ledger, and
 * the console's plans (in the admin database too: a restart of the console loses none).
 */
@Injectable()
export class AdminConnections implements OnApplicationShutdown {
  constructor(
    readonly redrive: RedriveService,
    readonly ledger: PostgresRedriveLedger,
    readonly plans: PostgresConsolePlanStore,
  ) {}

  /** Opens the admin database and builds the one redrive service, as the CLI does. */
  static async open(config: OpsConsoleConfig): Promise<AdminConnections> {
    const ledger = await PostgresRedriveLedger.connect(config.database);
    let plans: PostgresConsolePlanStore | undefined;
    try {
      plans = await PostgresConsolePlanStore.connect(config.database);
      const redrive = new RedriveService({
        broker: config.broker,
        credential: config.credential,
        approvers: config.keyring,
        topology: config.topology,
        ledger,
        keySecret: config.keySecret,
        carryHeaders: config.carryHeaders,
        // The demo's event definitions: an edit of a dead letter is checked against its event's schema.
        events: [PostCreated],
        readBudgetBytes: config.readBudgetBytes,
      });
      return new AdminConnections(redrive, ledger, plans);
    } catch (error) {
      await plans?.close();
      await ledger.close();
      throw error;
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redrive.close();
    await this.plans.close();
    await this.ledger.close();
  }
}
