import { Controller, Get, Inject, Logger, Req, Res } from '@nestjs/common';
import { brokerTrouble } from './broker-trouble';
import { ConsoleGate } from './console-gate';
import { ConsoleRequest, ConsoleResponse, field } from './console-http';
import { MessagingConsoleOptions } from './console-options.interface';
import { MESSAGING_CONSOLE_OPTIONS } from './messaging-console.module-definition';
import { CONSOLE_JS } from './views/console-script';
import { positionFromParam } from './views/dead-letter-views';
import { payloadFileName, prettyPayload } from './views/payload-views';

/** Bytes of a payload a download holds by default. */
const PAYLOAD_DOWNLOAD_BYTES = 8 * 1024 * 1024;

/**
 * What the console sends that is not a page: its script, and a message's payload as a file to download
 * (for the roles that may read payloads, recorded in the audit log like a payload shown).
 */
@Controller()
export class ConsoleFilesController {
  private readonly logger = new Logger('MessagingConsole');

  constructor(
    private readonly gate: ConsoleGate,
    @Inject(MESSAGING_CONSOLE_OPTIONS) private readonly options: MessagingConsoleOptions,
  ) {}

  @Get('assets/console.js')
  script(@Res() res: ConsoleResponse): void {
    res
      .status(200)
      .setHeader('Content-Type', 'text/javascript; charset=utf-8')
      .setHeader('X-Content-Type-Options', 'nosniff')
      .setHeader('Cache-Control', 'max-age=300')
      .send(CONSOLE_JS);
  }

  @Get('dead-letters/:queue/messages/:id/payload')
  async payload(@Req() req: ConsoleRequest, @Res() res: ConsoleResponse): Promise<void> {
    const session = await this.gate.forPage(req, res, 'read-payload');
    if (!session) return;
    const queue = req.params.queue;
    if (!this.options.deadLetterQueues.includes(queue)) {
      return this.gate.fail(res, session, 404, 'This console does not show that queue.');
    }
    const position = positionFromParam(field(req.query, 'at'));
    if (!position) return this.gate.fail(res, session, 404, 'Open the message from its queue’s page.');
    let letter;
    try {
      const most = this.options.payloadDownloadBytes ?? PAYLOAD_DOWNLOAD_BYTES;
      letter = await this.options.redrive.inspectMessage(queue, position, req.params.id, most);
    } catch (error) {
      return this.gate.fail(res, session, 502, brokerTrouble(error, this.logger));
    }
    if (!letter) {
      return this.gate.fail(
        res,
        session,
        404,
        'That message is no longer there (redriven, or the queue changed).',
      );
    }
    await this.gate.record(session.user.name, 'PAYLOAD_DOWNLOADED', `message ${req.params.id}`, queue);
    const { text, json } = prettyPayload(letter.payload);
    res
      .status(200)
      .setHeader('Content-Type', json ? 'application/json; charset=utf-8' : 'text/plain; charset=utf-8')
      .setHeader(
        'Content-Disposition',
        `attachment; filename="${payloadFileName(letter.message.messageId, json)}"`,
      )
      // Opened instead of saved, it is still inert: no script, no style, no frame.
      .setHeader('Content-Security-Policy', "default-src 'none'; sandbox")
      .setHeader('X-Content-Type-Options', 'nosniff')
      .setHeader('Referrer-Policy', 'no-referrer')
      .setHeader('Cache-Control', 'no-store')
      .send(text);
  }
}
