import { Command } from 'commander';
import { PostgresRedriveLedger } from '../../redrive/ledger/postgres-redrive-ledger';
import { resolveAdminDatabase } from '../admin-options';
import { CommandContext } from './command-context';

/** `nest-messaging db migrate`: `MessagingAdminMigrations` on the admin database (the redrive ledger, the console's plans). */
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
  return new Command('db').description('the admin database').addCommand(migrate);
}
