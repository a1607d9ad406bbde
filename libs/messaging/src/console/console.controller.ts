import { Controller, Get, Inject, Logger, OnApplicationBootstrap, Post, Req, Res } from '@nestjs/common';
import { RedriveRefusedError } from '../redrive/errors/redrive-refused.error';
import { brokerTrouble } from './broker-trouble';
import { ConsoleGate, REFRESH_HEADER } from './console-gate';
import { ConsoleLetters } from './console-letters';
import { ConsoleRequest, ConsoleResponse, field, sendPage } from './console-http';
import { ConsoleMetrics } from './console-metrics';
import { MessagingConsoleOptions } from './console-options.interface';
import { ConsoleRedrive } from './console-redrive';
import { ConsoleSession } from './console-sessions';
import { planState } from './plans/console-plan';
import { MESSAGING_CONSOLE_OPTIONS } from './messaging-console.module-definition';
import { CONSOLE_CSS } from './views/console-css';
import { overviewPage } from './views/overview-views';
import { withOldest } from './console-overview';
import { ConsoleTrends } from './trends/overview-trends';
import { auditPage, chainNotice } from './views/audit-views';
import { auditCursorOf, auditFilterOf, auditPageOf, hiddenMatchesDropped } from './views/audit-filter';
import {
  DeadLetterFilter,
  deadLetterPage,
  deadLetterQueuePage,
  deadLetterQueuesPage,
} from './views/dead-letter-views';
import { redrivePlanPage, redrivePlansPage } from './views/redrive-views';
import { systemClock } from '../common/clock';

/** Entries an audit page shows. */
const AUDIT_PAGE_SIZE = 50;
/** The latest entries whose chain the audit page checks on every view. */
const AUDIT_CHAIN_CHECKED = 200;
/** Plans the redrive page lists. */
const PLANS_PAGE_SIZE = 100;
/** Bytes of a payload shown by default. */
const PAYLOAD_PREVIEW_BYTES = 64 * 1024;

/**
 * The console's pages and forms. It only translates HTTP: `ConsoleGate` decides who may do what,
 * `ConsoleRedrive` plans, approves and executes through the application's `RedriveService`.
 */
@Controller()
export class ConsoleController implements OnApplicationBootstrap {
  private readonly logger = new Logger('MessagingConsole');
  private readonly metrics: ConsoleMetrics;
  private readonly now: () => number;
  /** The age of each DLQ's oldest message as last read: what the overview's own refresh shows (RabbitMQ). */
  private readonly oldest = new Map<string, string | undefined>();
  /** The overview's figures over the last hour, for its small charts. */
  private readonly trends: ConsoleTrends;

  constructor(
    private readonly gate: ConsoleGate,
    private readonly letters: ConsoleLetters,
    private readonly redrive: ConsoleRedrive,
    @Inject(MESSAGING_CONSOLE_OPTIONS) private readonly options: MessagingConsoleOptions,
  ) {
    const clock = options.clock ?? systemClock;
    this.now = () => clock.now();
    this.metrics = new ConsoleMetrics(options.metricsSources ?? [], this.now);
    this.trends = new ConsoleTrends(clock);
  }

  @Get('assets/console.css')
  stylesheet(@Res() res: ConsoleResponse): void {
    res
      .status(200)
      .setHeader('Content-Type', 'text/css; charset=utf-8')
      .setHeader('Cache-Control', 'max-age=300')
      .send(CONSOLE_CSS);
  }

  @Get('login')
  loginForm(@Req() req: ConsoleRequest, @Res() res: ConsoleResponse): void {
    this.gate.loginForm(req, res);
  }

  /**
   * Refuses to start (`AuditLogRewritableError`) when the console's database login could rewrite the audit
   * log despite its triggers (`RedriveLedger.requireAppendOnly()`: owner, owner member, superuser,
   * UPDATE/DELETE/TRUNCATE/TRIGGER; issue 45, finding 13), unless `allowRewritableAudit`, which is logged as
   * an error and recorded in every entry. A ledger without the check (not PostgreSQL) is not asked.
   */
  async onApplicationBootstrap(): Promise<void> {
    const allow = this.options.allowRewritableAudit === true;
    const rights = (await this.options.ledger.requireAppendOnly?.(allow)) ?? [];
    if (rights.length > 0) {
      this.logger.error(
        `OVERRIDE: the console's database login can rewrite the audit log (${rights.join(', ')}); started ` +
          'only because allowRewritableAudit is set, and every audit entry records it (rewrite-rights). Give ' +
          'it a role with SELECT and INSERT only (docs/guide/08-redrive.md, "Permissions, the admin database").',
      );
    }
  }

  @Post('login')
  login(@Req() req: ConsoleRequest, @Res() res: ConsoleResponse): Promise<void> {
    return this.gate.signIn(req, res);
  }

  @Post('logout')
  async logout(@Req() req: ConsoleRequest, @Res() res: ConsoleResponse): Promise<void> {
    const session = await this.gate.forForm(req, res, 'view');
    if (session) await this.gate.signOut(session, req, res);
  }

  @Get()
  async overview(@Req() req: ConsoleRequest, @Res() res: ConsoleResponse): Promise<void> {
    const session = await this.gate.forPage(req, res);
    if (!session) return;
    const [services, queues] = await Promise.all([this.metrics.read(), this.queues()]);
    const refresh = req.headers[REFRESH_HEADER] === '1';
    const aged = await withOldest(this.options.redrive, queues.queues, this.logger, refresh, this.oldest);
    const trends = this.trends.observe(services, aged);
    const overview = { services, queues: aged, queueError: queues.error, now: this.now(), trends };
    sendPage(res, 200, overviewPage(this.gate.context(session), overview));
  }

  @Get('dead-letters')
  async deadLetterQueues(@Req() req: ConsoleRequest, @Res() res: ConsoleResponse): Promise<void> {
    const session = await this.gate.forPage(req, res);
    if (!session) return;
    const { queues, error } = await this.queues();
    if (error) return this.gate.fail(res, session, 502, error);
    sendPage(res, 200, deadLetterQueuesPage(this.gate.context(session), queues));
  }

  @Get('dead-letters/:queue')
  async deadLetterQueue(@Req() req: ConsoleRequest, @Res() res: ConsoleResponse): Promise<void> {
    const session = await this.gate.forPage(req, res);
    if (!session) return;
    const queue = this.letters.queueOf(req, res, session);
    if (!queue) return;
    const read = await this.letters.fromBroker(res, session, () => this.options.redrive.inspectHead(queue));
    if (!read) return;
    const older = Number(field(req.query, 'olderThanMinutes'));
    const filter: DeadLetterFilter = {
      category: field(req.query, 'category'),
      code: field(req.query, 'code'),
      type: field(req.query, 'type'),
      olderThanMinutes: Number.isFinite(older) && older >= 0 ? older : undefined,
    };
    const mayPlan = this.gate.may(session, 'plan');
    sendPage(
      res,
      200,
      deadLetterQueuePage(
        this.gate.context(session),
        queue,
        read.value.letters,
        filter,
        mayPlan,
        this.now(),
        read.value.cutOff,
      ),
    );
  }

  @Get('dead-letters/:queue/messages/:id')
  async deadLetter(@Req() req: ConsoleRequest, @Res() res: ConsoleResponse): Promise<void> {
    const session = await this.gate.forPage(req, res);
    if (!session) return;
    const preview = this.options.payloadPreviewBytes ?? PAYLOAD_PREVIEW_BYTES;
    const opened = await this.letters.open(req, res, session, preview);
    if (!opened) return;
    const { queue, letter } = opened;
    const mayRead = this.gate.may(session, 'read-payload');
    if (mayRead)
      await this.gate.record(session.user.name, 'PAYLOAD_SHOWN', `message ${req.params.id}`, queue);
    sendPage(
      res,
      200,
      deadLetterPage(
        this.gate.context(session),
        queue,
        letter,
        mayRead ? letter.payload : undefined,
        mayRead && this.gate.may(session, 'plan'),
      ),
    );
  }

  @Get('redrive')
  async plans(@Req() req: ConsoleRequest, @Res() res: ConsoleResponse): Promise<void> {
    const session = await this.gate.forPage(req, res);
    if (!session) return;
    const plans = await this.redrive.plans.list({ limit: PLANS_PAGE_SIZE });
    const now = new Date(this.now());
    const states = plans.map((p) => planState(p, plans, now, this.options.planTtlMs));
    sendPage(res, 200, redrivePlansPage(this.gate.context(session), plans, states));
  }

  @Post('redrive/plans')
  async plan(@Req() req: ConsoleRequest, @Res() res: ConsoleResponse): Promise<void> {
    const session = await this.gate.forForm(req, res, 'plan');
    if (!session) return;
    const source = field(req.body, 'source') ?? '';
    const limit = Number(field(req.body, 'limit') ?? '100');
    if (!this.options.deadLetterQueues.includes(source)) {
      return this.gate.fail(res, session, 400, 'Choose one of the console’s dead-letter queues.');
    }
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
      return this.gate.fail(res, session, 400, 'The number of messages is a whole number from 1 to 100.');
    }
    try {
      const entry = await this.redrive.plan(session, source, limit);
      res.redirect(303, `${this.gate.base}/redrive/plans/${entry.id}`);
    } catch (error) {
      if (!(error instanceof RedriveRefusedError)) throw error;
      this.gate.fail(res, session, 409, `Refused (${error.guard}): ${error.message}`);
    }
  }

  @Get('redrive/plans/:id')
  async planPage(@Req() req: ConsoleRequest, @Res() res: ConsoleResponse): Promise<void> {
    const session = await this.gate.forPage(req, res);
    if (!session) return;
    const entry = await this.redrive.plans.get(req.params.id);
    if (!entry) return this.gate.fail(res, session, 404, 'No such plan in this console.');
    const state = await this.redrive.stateOf(entry);
    sendPage(res, 200, redrivePlanPage(this.gate.context(session), entry, state, this.actions(session)));
  }

  @Post('redrive/plans/:id/approve')
  approve(@Req() req: ConsoleRequest, @Res() res: ConsoleResponse): Promise<void> {
    return this.step(req, res, 'approve');
  }

  @Post('redrive/plans/:id/execute')
  execute(@Req() req: ConsoleRequest, @Res() res: ConsoleResponse): Promise<void> {
    return this.step(req, res, 'execute');
  }

  @Get('audit')
  async audit(@Req() req: ConsoleRequest, @Res() res: ConsoleResponse): Promise<void> {
    const session = await this.gate.forPage(req, res);
    if (!session) return;
    const whole = field(req.query, 'verify') === 'all';
    const { filter, query } = auditFilterOf(req.query);
    const cursor = auditCursorOf(req.query);
    const found = await this.options.ledger.history({ ...query, ...cursor, limit: AUDIT_PAGE_SIZE + 1 });
    const { entries, paging } = auditPageOf(found, cursor, AUDIT_PAGE_SIZE);
    const context = this.gate.context(session);
    const shown = hiddenMatchesDropped(context, entries, filter.actor);
    const check = await this.options.ledger.verifyChain(whole ? {} : { last: AUDIT_CHAIN_CHECKED });
    sendPage(res, 200, auditPage(context, shown, filter, chainNotice(context, check, whole), paging, whole));
  }

  private async step(req: ConsoleRequest, res: ConsoleResponse, verb: 'approve' | 'execute'): Promise<void> {
    const session = await this.gate.forForm(req, res, verb);
    if (!session) return;
    const entry = await this.redrive.plans.get(req.params.id);
    if (!entry) return this.gate.fail(res, session, 404, 'No such plan in this console.');
    const outcome =
      verb === 'approve'
        ? await this.redrive.approve(session, entry)
        : await this.redrive.execute(session, entry);
    if (outcome.ok) return res.redirect(303, `${this.gate.base}/redrive/plans/${entry.id}`);
    const flash = { kind: 'error' as const, text: outcome.message };
    // The plan as it is now (a refusal may have found it stale), with the refusal as this answer's notice.
    const now = (await this.redrive.plans.get(entry.id)) ?? entry;
    const state = await this.redrive.stateOf(now);
    const context = this.gate.context(session);
    sendPage(res, outcome.status, redrivePlanPage(context, now, state, this.actions(session), flash));
  }

  private actions(session: ConsoleSession) {
    return { approve: this.gate.may(session, 'approve'), execute: this.gate.may(session, 'execute') };
  }

  private async queues() {
    try {
      return { queues: await this.options.redrive.list(this.options.deadLetterQueues) };
    } catch (error) {
      return { queues: [], error: brokerTrouble(error, this.logger) };
    }
  }
}
