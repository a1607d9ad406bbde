import { Command } from 'commander';
import { PostgresRedriveLedger } from '../../redrive/ledger/postgres-redrive-ledger';
import { topologyFingerprint } from '../../redrive/pinned-fingerprints';
import { AdminEnv, resolveAdminDatabase } from '../admin-options';
import { CliUsageError } from '../cli-usage.error';
import { CommandContext, TopologyFlag, withTopologyOption } from './command-context';

/**
 * `nest-messaging db migrate`: `MessagingAdminMigrations` on the admin database (the redrive ledger, the
 * console's plans); `db pin-keyring` and `db pin-topology`: the reviewed approver keyring's and topology's
 * fingerprints pinned there (issue 45).
 */
export function dbCommand(context: CommandContext): Command {
  const migrate = new Command('migrate')
    .description(
      "run the library's admin migrations (the redrive ledger, the console's plans) on the admin database " +
        "(MESSAGING_ADMIN_DATABASE_URL), as the tables' owner",
    )
    .action(async () => {
      const ran = await PostgresRedriveLedger.migrate(resolveAdminDatabase(context.io.env));
      context.print([
        ran.length > 0 ? `Ran ${ran.join(', ')}.` : 'Nothing to run: the database is up to date.',
      ]);
    });
  const pin = new Command('pin-keyring')
    .description(
      "pin the reviewed approver keyring (MESSAGING_ADMIN_APPROVERS) in the admin database, as the tables' " +
        'owner: approve and execute then refuse any other keyring file',
    )
    .action(async () => {
      if (!context.io.env[AdminEnv.APPROVERS]) {
        throw new CliUsageError(`Name the reviewed keyring file in ${AdminEnv.APPROVERS}.`);
      }
      const keyring = await context.keyring();
      await PostgresRedriveLedger.pinKeyring(resolveAdminDatabase(context.io.env), keyring.fingerprint);
      context.print([`Pinned the approver keyring ${keyring.fingerprint}.`]);
    });
  const pinTopology = withTopologyOption(new Command('pin-topology'))
    .description(
      "pin the reviewed topology (--topology or MESSAGING_ADMIN_TOPOLOGY) in the admin database, as the tables' " +
        'owner: approve and execute then refuse any other topology file, or none',
    )
    .action(async (flags: TopologyFlag) => {
      const topology = await context.topology(flags);
      if (!topology) {
        throw new CliUsageError(`Name the reviewed topology file: --topology or ${AdminEnv.TOPOLOGY}.`);
      }
      const fingerprint = topologyFingerprint(topology);
      await PostgresRedriveLedger.pinTopology(resolveAdminDatabase(context.io.env), fingerprint);
      context.print([`Pinned the topology ${fingerprint}.`]);
    });
  return new Command('db')
    .description('the admin database')
    .addCommand(migrate)
    .addCommand(pin)
    .addCommand(pinTopology);
}
