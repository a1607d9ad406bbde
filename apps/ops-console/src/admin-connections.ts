import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { PostgresRedriveLedger, RedriveService } from 'nest-reliable-messaging/redrive';
import { OpsConsoleConfig } from './config/console.config';

/** The admin side the console works through: the redrive service (admin broker credential) and its ledger. */
@Injectable()
export class AdminConnections implements OnApplicationShutdown {
  constructor(
    readonly redrive: RedriveService,
    readonly ledger: PostgresRedriveLedger,
  ) {}

  /** Opens the admin database and builds the one redrive service, as the CLI does. */
  static async open(config: OpsConsoleConfig): Promise<AdminConnections> {
    const ledger = await PostgresRedriveLedger.connect(config.database);
    try {
      const redrive = new RedriveService({
        broker: config.broker,
        credential: config.credential,
        approvers: config.keyring,
        topology: config.topology,
        ledger,
        keySecret: config.keySecret,
      });
      return new AdminConnections(redrive, ledger);
    } catch (error) {
      await ledger.close();
      throw error;
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redrive.close();
    await this.ledger.close();
  }
}
