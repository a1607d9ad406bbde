#!/usr/bin/env node
/**
 * `nest-messaging dlq … | approver keygen | topology … | db migrate`: the library's admin CLI, the package's
 * `bin` (`npx nest-messaging …` in an application that installed the package; `npm run messaging -- …` here).
 */
import { runMessagingCli } from './messaging-cli';

void runMessagingCli(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
