import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module';
import { hashPassword } from './auth/password-hash';
import { loadOpsConsoleConfig } from './config/console.config';

/** `node main.js hash-password`: reads a password on standard input, prints its hash for CONSOLE_USERS. */
async function printPasswordHash(): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const password = Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
  process.stdout.write(`${await hashPassword(password)}\n`);
}

async function bootstrap(): Promise<void> {
  const config = await loadOpsConsoleConfig();
  // Forms only (no JSON), small: the console's pages post url-encoded forms of a few fields.
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), {
    abortOnError: false,
    bodyParser: false,
  });
  app.disable('x-powered-by');
  // Behind a TLS proxy: the client's address (sign-in limits) and HTTPS (cookies) come from its headers.
  if (config.trustProxy !== undefined) app.set('trust proxy', config.trustProxy);
  app.useBodyParser('urlencoded', { extended: false, limit: '16kb' });
  app.enableShutdownHooks();
  await app.listen(config.port, config.host ?? '127.0.0.1');
  new Logger('ops-console').log(
    `Console on http://${config.host ?? '127.0.0.1'}:${config.port}/${config.path} (${config.broker.kind}, ` +
      `${config.users.length} user(s), ${config.approverSigners.length} approver key(s); pid ${process.pid}).`,
  );
}

(process.argv[2] === 'hash-password' ? printPasswordHash() : bootstrap()).catch((error: unknown) => {
  console.error(`ops-console: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
