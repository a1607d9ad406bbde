import { Controller, Get, Inject, Post, Req, Res } from '@nestjs/common';
import { groupDeadLetters } from '../redrive/dead-letter-groups';
import { RedriveRefusedError } from '../redrive/errors/redrive-refused.error';
import { InspectedDeadLetter } from '../redrive/inspected-dead-letter';
import { ReadCutOff } from '../redrive/read-budget';
import { ConsoleGate } from './console-gate';
import { ConsoleRequest, ConsoleResponse, field, sendPage } from './console-http';
import { ConsoleLetters } from './console-letters';
import { MessagingConsoleOptions } from './console-options.interface';
import { ConsoleRedrive } from './console-redrive';
import { readSelectionForm } from './console-selection-form';
import { readEditForm } from './console-edit-form';
import { positionFromParam } from './views/dead-letter-views';
import { ConsoleSession } from './console-sessions';
import { MESSAGING_CONSOLE_OPTIONS } from './messaging-console.module-definition';
import { keySearchDetail } from './key-search-audit';
import { KEY_SEARCHES_PER_WINDOW, KeySearchLimit } from './key-search-limit';
import { systemClock } from '../common/clock';
import {
  allLettersPage,
  archivePage,
  groupsPage,
  LETTERS_PER_PAGE,
  searchPage,
} from './views/incident-views';

/**
 * The console's incident pages: a dead-letter queue grouped by cause, all its messages paged, a search by
 * message id or real key, its archive; and plans of a group, picked messages or a filter, to redrive or to
 * discard. Reads settle nothing; plans go through the same `ConsoleRedrive` (four eyes, audit) as the rest.
 */
@Controller()
export class ConsoleIncidentController {
  private readonly keySearches: KeySearchLimit;

  constructor(
    private readonly gate: ConsoleGate,
    private readonly letters: ConsoleLetters,
    private readonly redrive: ConsoleRedrive,
    @Inject(MESSAGING_CONSOLE_OPTIONS) private readonly options: MessagingConsoleOptions,
  ) {
    const clock = options.clock ?? systemClock;
    this.keySearches = new KeySearchLimit(() => clock.now());
  }

  @Get('dead-letters/:queue/groups')
  async groups(@Req() req: ConsoleRequest, @Res() res: ConsoleResponse): Promise<void> {
    await this.page(req, res, async (session, queue) => {
      const { letters, depth, cutOff } = await this.options.redrive.browse(queue);
      const groups = groupDeadLetters(letters);
      return groupsPage(
        this.gate.context(session),
        queue,
        groups,
        depth,
        letters.length,
        this.gate.may(session, 'plan'),
        cutOff,
      );
    });
  }

  @Get('dead-letters/:queue/all')
  async all(@Req() req: ConsoleRequest, @Res() res: ConsoleResponse): Promise<void> {
    await this.page(req, res, async (session, queue) => {
      const { letters, depth, cutOff } = await this.options.redrive.browse(queue);
      const pages = Math.max(1, Math.ceil(letters.length / LETTERS_PER_PAGE));
      const asked = Number(field(req.query, 'page') ?? '1');
      const pageNumber = Number.isInteger(asked) ? Math.min(Math.max(asked, 1), pages) : 1;
      return allLettersPage(
        this.gate.context(session),
        queue,
        letters,
        depth,
        pageNumber,
        this.gate.may(session, 'plan'),
        cutOff,
      );
    });
  }

  @Get('dead-letters/:queue/search')
  async search(@Req() req: ConsoleRequest, @Res() res: ConsoleResponse): Promise<void> {
    const session = await this.gate.forPage(req, res);
    if (session) await this.find(req, res, session, { messageId: field(req.query, 'messageId') });
  }

  /**
   * A search by key is a form post: the real key never goes into a URL (history, proxy and access logs). It
   * is recorded in the audit log (`KEY_SEARCHED`, with what it found; never the key). Only the roles that may
   * read payloads (`payloadRoles`) may search by key, at most `KEY_SEARCHES_PER_WINDOW` times per session in
   * 10 minutes (429 beyond, recorded once as `KEY_SEARCH_LIMITED`): it tells whether a guessed key is there
   * (issue 45, finding 14). A search by message id only is open to every role.
   */
  @Post('dead-letters/:queue/search')
  async searchByKey(@Req() req: ConsoleRequest, @Res() res: ConsoleResponse): Promise<void> {
    const key = field(req.body, 'key') || undefined;
    const session = await this.gate.forForm(req, res, key === undefined ? 'view' : 'read-payload');
    if (!session) return;
    if (key !== undefined) {
      const verdict = this.keySearches.take(session.id);
      if (!verdict.allowed) {
        const seconds = Math.ceil(verdict.retryAfterMs / 1000);
        if (verdict.first) {
          const detail = `more than ${KEY_SEARCHES_PER_WINDOW} searches by key in 10 minutes`;
          await this.gate.record(session.user.name, 'KEY_SEARCH_LIMITED', detail);
        }
        res.setHeader('Retry-After', String(seconds));
        const text = `At most ${KEY_SEARCHES_PER_WINDOW} searches by key in 10 minutes: try again in ${seconds} s.`;
        return this.gate.fail(res, session, 429, text);
      }
    }
    await this.find(req, res, session, { messageId: field(req.body, 'messageId'), key });
  }

  @Get('dead-letters/:queue/archive')
  async archive(@Req() req: ConsoleRequest, @Res() res: ConsoleResponse): Promise<void> {
    await this.page(req, res, async (session, queue) => {
      const { letters, depth, cutOff } = await this.options.redrive.inspectArchive(queue);
      return archivePage(this.gate.context(session), queue, letters, depth, cutOff);
    });
  }

  @Post('redrive/selections')
  async plan(@Req() req: ConsoleRequest, @Res() res: ConsoleResponse): Promise<void> {
    const session = await this.gate.forForm(req, res, 'plan');
    if (!session) return;
    const source = field(req.body, 'source') ?? '';
    if (!this.options.deadLetterQueues.includes(source)) {
      return this.gate.fail(res, session, 400, 'Choose one of the console’s dead-letter queues.');
    }
    const form = readSelectionForm(req.body);
    if (!form.ok) return this.gate.fail(res, session, 400, form.message);
    try {
      const entry = await this.redrive.planSelection(session, source, form.selection, form.action);
      res.redirect(303, `${this.gate.base}/redrive/plans/${entry.id}`);
    } catch (error) {
      if (!(error instanceof RedriveRefusedError)) throw error;
      this.gate.fail(res, session, 409, `Refused (${error.guard}): ${error.message}`);
    }
  }

  @Post('dead-letters/:queue/messages/:id/edit')
  async edit(@Req() req: ConsoleRequest, @Res() res: ConsoleResponse): Promise<void> {
    const session = await this.gate.forForm(req, res, 'plan');
    if (!session) return;
    // The editor reads the payload they change: both rights, as the dead-letter page offers the form.
    if (!this.gate.may(session, 'read-payload')) {
      return this.gate.fail(res, session, 403, 'Editing a message needs the right to read payloads.');
    }
    const queue = this.letters.queueOf(req, res, session);
    if (!queue) return;
    const position = positionFromParam(field(req.query, 'at'));
    if (!position) return this.gate.fail(res, session, 404, 'Open the message from its queue’s page.');
    const form = readEditForm(req.body);
    if (!form.ok) return this.gate.fail(res, session, 400, form.message);
    try {
      const { payload, headers, withoutSchema } = form;
      const entry = await this.redrive.planEdit(session, {
        source: queue,
        position,
        messageId: req.params.id,
        payload,
        headers,
        withoutSchema,
      });
      res.redirect(303, `${this.gate.base}/redrive/plans/${entry.id}`);
    } catch (error) {
      if (!(error instanceof RedriveRefusedError)) throw error;
      this.gate.fail(res, session, 409, `Refused (${error.guard}): ${error.message}`);
    }
  }

  private async find(
    req: ConsoleRequest,
    res: ConsoleResponse,
    session: ConsoleSession,
    query: { messageId?: string; key?: string },
  ): Promise<void> {
    const queue = this.letters.queueOf(req, res, session);
    if (!queue) return;
    let found: readonly InspectedDeadLetter[] | undefined;
    let cutOff: ReadCutOff | undefined;
    if (query.messageId !== undefined || query.key !== undefined) {
      const read = await this.letters.fromBroker(res, session, () =>
        this.options.redrive.searchHead(queue, query),
      );
      if (!read) return;
      ({ letters: found, cutOff } = read.value);
      if (query.key !== undefined) {
        const detail = keySearchDetail(query.messageId, found);
        await this.gate.record(session.user.name, 'KEY_SEARCHED', detail, queue);
      }
    }
    // The key is not shown again (not even to its author): the form's key field stays empty.
    const page = searchPage(
      this.gate.context(session),
      queue,
      { messageId: query.messageId },
      found,
      this.gate.may(session, 'plan'),
      this.gate.may(session, 'read-payload'),
      cutOff,
    );
    sendPage(res, 200, page);
  }

  /** A read-only page of a known queue; a broker error is shown as a reference into the log. */
  private async page(
    req: ConsoleRequest,
    res: ConsoleResponse,
    render: (session: ConsoleSession, queue: string) => Promise<string>,
  ): Promise<void> {
    const session = await this.gate.forPage(req, res);
    if (!session) return;
    const queue = this.letters.queueOf(req, res, session);
    if (!queue) return;
    const body = await this.letters.fromBroker(res, session, () => render(session, queue));
    if (body) sendPage(res, 200, body.value);
  }
}
