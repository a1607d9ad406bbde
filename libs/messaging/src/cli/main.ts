/**
 * `npm run messaging -- dlq … | approver keygen | topology … | db migrate`: the library's admin CLI. It needs no Nest
 * application and no decorator metadata, so tsx runs it from source.
 */
import { runMessagingCli } from './messaging-cli';

void runMessagingCli(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
