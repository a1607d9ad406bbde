/**
 * Copied into each generated consumer app of the compatibility matrix (`npm run test:compat`) beside the
 * README's five-minute example, compiled by the app's own toolchain and run with the cell's Node: it drives
 * the example against the real database and broker and prints one JSON line with what it saw.
 *
 * `compat-check.js`: a message retried, a duplicate suppressed, a scheduled reminder handled when due (not
 * before), and one order dead-lettered (its downstream system down for every attempt), for the guide's local
 * redrive (`local-redrive.sh`) to bring back.
 * `compat-check.js redriven <orderId>`: the application started again, with the downstream system back, until
 * it has billed that order.
 */
import { LoggerService, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MessagingMetrics, MessagingModule } from 'nest-reliable-messaging';
import { DataSource } from 'typeorm';
import { AppModule } from './app.module.js';
import { Invoice } from './shop/invoice.entity.js';
import { OrdersService } from './shop/orders.service.js';
import { ReceiptSender } from './shop/receipt-sender.js';

/** Keeps every log line (debug included) so the check can see retries and suppressed duplicates. */
class RecordingLogger implements LoggerService {
  readonly lines: string[] = [];
  /** When each line was logged (`Date.now()`), by index. */
  readonly times: number[] = [];
  log(message: unknown): void {
    this.record('log', message);
  }
  error(message: unknown): void {
    this.record('error', message);
  }
  warn(message: unknown): void {
    this.record('warn', message);
  }
  debug(message: unknown): void {
    this.record('debug', message);
  }
  verbose(message: unknown): void {
    this.record('verbose', message);
  }
  private record(level: string, message: unknown): void {
    const line = `${level} ${String(message)}`;
    this.lines.push(line);
    this.times.push(Date.now());
    if (process.env.COMPAT_VERBOSE) process.stderr.write(`${line}\n`);
  }
}

async function until(
  what: string,
  done: () => boolean | Promise<boolean>,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The same shop on Kafka, for an app that did not install kafkajs: its startup must name the package. */
@Module({
  imports: [
    TypeOrmModule.forRoot({ type: 'postgres', url: process.env.DATABASE_URL }),
    MessagingModule.forRoot({ serviceName: 'shop', transport: { kind: 'kafka', brokers: ['127.0.0.1:1'] } }),
  ],
})
class KafkaShopModule {}

/** What starting `KafkaShopModule` failed with (`undefined` when it started). */
async function startupErrorWithoutKafkajs(): Promise<string | undefined> {
  try {
    const app = await NestFactory.createApplicationContext(KafkaShopModule, {
      logger: false,
      abortOnError: false,
    });
    await app.close();
    return undefined;
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
}

/** Starts the application and waits until it has billed `orderId` (redriven from the DLQ). */
async function billRedriven(orderId: number): Promise<void> {
  const logger = new RecordingLogger();
  const app = await NestFactory.createApplicationContext(AppModule, { logger });
  try {
    const billed = () => logger.lines.find((line) => line.includes(`Order ${orderId} billed`));
    await until(`order ${orderId} billed after its redrive`, () => billed() !== undefined, 120_000);
    const invoices = await app.get(DataSource).getRepository(Invoice).count({ where: { orderId } });
    console.log(JSON.stringify({ redrivenOrder: orderId, billedLine: billed(), invoices }));
  } finally {
    await app.close();
  }
}

async function main(): Promise<void> {
  if (process.argv[2] === 'redriven') return billRedriven(Number(process.argv[3]));
  const logger = new RecordingLogger();
  const app = await NestFactory.createApplicationContext(AppModule, { logger });
  try {
    // The downstream system fails the first call (a connection reset): the retry policy takes it.
    const receipts = app.get(ReceiptSender);
    const send = receipts.send.bind(receipts);
    const receiptsSent: number[] = [];
    let failures = 0;
    const downFor = 8; // a customer whose receipts the downstream system refuses, every time
    let firstHandledAt: number | undefined;
    receipts.send = async (customerId: number, orderId: number) => {
      if (failures++ === 0 || customerId === downFor)
        throw Object.assign(new Error('connection reset'), { code: 'ECONNRESET' });
      await send(customerId, orderId);
      receiptsSent.push(orderId);
      firstHandledAt ??= Date.now();
    };

    const orders = app.get(OrdersService);
    // The first order's payment reminder is due 1.5 s after its insert (the example's default: 30 minutes).
    const remindInMs = 1_500;
    const placedAt = Date.now();
    const first = await orders.place(7, '19.90', remindInMs);
    const reminderLine = () =>
      logger.lines.findIndex((line) => line.includes(`Order ${first.id}: payment reminder for customer 7`));
    await until('the first order billed', () => receiptsSent.includes(first.id));
    await until("the first order's payment reminder", () => reminderLine() >= 0);
    // From before the insert to the handler's log line: at least remindInMs (one clock, the database's host).
    const reminder = { order: first.id, remindInMs, afterMs: logger.times[reminderLine()] - placedAt };
    const billedOnAttempt = logger.lines
      .find((line) => line.includes(`Order ${first.id} billed`))
      ?.match(/attempt (\d+)/)?.[1];

    // A duplicate delivery, as after a relay crash between publish and mark: the row is published again.
    const dataSource = app.get(DataSource);
    await dataSource.query(`update messaging_outbox set sent_at = null where payload->>'orderId' = $1`, [
      String(first.id),
    ]);
    const second = await orders.place(7, '5.00');
    const duplicates = () => logger.lines.filter((line) => line.includes('duplicate, skipped')).length;
    await until('the duplicate suppressed', () => receiptsSent.includes(second.id) && duplicates() > 0);

    // The downstream system down for every attempt of a third order: the policy gives up, and the message
    // goes to the dead-letter queue (closing the application below waits for its copy to be settled).
    const failuresBefore = failures;
    const third = await orders.place(downFor, '42.00');
    // (The failure's own line: the startup summary says "dead-lettered" too, of a handler without a policy.)
    await until('the third order dead-lettered', () =>
      logger.lines.some((line) =>
        /^warn Message .* failed: .*; dead-lettered \(.*orders\.billing\.dlq/.test(line),
      ),
    );

    let duplicateMetric: string | undefined;
    try {
      const text = await app.get(MessagingMetrics).metrics();
      duplicateMetric = text
        .split('\n')
        .find((line) => line.startsWith('messaging_consumer_messages_total{') && line.includes('duplicate'));
    } catch (error) {
      duplicateMetric = `unavailable: ${(error as Error).name}`;
    }

    console.log(
      JSON.stringify({
        firstOrder: first.id,
        reminder,
        billedOnAttempt: Number(billedOnAttempt),
        failedAttempts: failuresBefore - receiptsSent.length,
        deadLettered: { order: third.id, attempts: failures - failuresBefore },
        firstHandledAt,
        receiptsSent,
        invoices: await dataSource.getRepository(Invoice).count(),
        duplicatesSuppressed: duplicates(),
        duplicateMetric,
        kafkaStartupError: process.env.COMPAT_WITHOUT_KAFKAJS
          ? await startupErrorWithoutKafkajs()
          : undefined,
      }),
    );
  } finally {
    await app.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
