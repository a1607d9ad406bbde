import { Controller, Get, Inject, Req, Res } from '@nestjs/common';
import { ConsoleGate } from './console-gate';
import { ConsoleRequest, ConsoleResponse } from './console-http';
import { ConsoleLetters } from './console-letters';
import { MessagingConsoleOptions } from './console-options.interface';
import { MESSAGING_CONSOLE_OPTIONS } from './messaging-console.module-definition';
import { CONSOLE_JS } from './views/console-script';
import { payloadFileName, prettyPayload } from './views/payload-views';

/** Bytes of a payload a download holds by default. */
const PAYLOAD_DOWNLOAD_BYTES = 8 * 1024 * 1024;

/**
 * What the console sends that is not a page: its script, and a message's payload as a file to download
 * (for the roles that may read payloads, recorded in the audit log like a payload shown).
 */
@Controller()
export class ConsoleFilesController {
  constructor(
    private readonly gate: ConsoleGate,
    private readonly letters: ConsoleLetters,
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
    const most = this.options.payloadDownloadBytes ?? PAYLOAD_DOWNLOAD_BYTES;
    const opened = await this.letters.open(req, res, session, most);
    if (!opened) return;
    const { queue, letter } = opened;
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
