import { Inject, Injectable, Logger } from '@nestjs/common';
import { InspectedDeadLetterWithPayload } from '../redrive/inspected-dead-letter';
import { brokerTrouble } from './broker-trouble';
import { ConsoleGate } from './console-gate';
import { ConsoleRequest, ConsoleResponse, field } from './console-http';
import { MessagingConsoleOptions } from './console-options.interface';
import { ConsoleSession } from './console-sessions';
import { MESSAGING_CONSOLE_OPTIONS } from './messaging-console.module-definition';
import { positionFromParam } from './views/dead-letter-views';

/** A dead letter a request opened: its queue and the message read at its position. */
export interface OpenedLetter {
  readonly queue: string;
  readonly letter: InspectedDeadLetterWithPayload;
}

/**
 * What the console's pages read from the dead-letter queues, for a signed-in person: a queue the console
 * shows, a message at its position, anything the broker answers. Whatever goes wrong is answered here
 * with `ConsoleGate.fail` (404, or 502 with a reference into the log for broker trouble), and the caller
 * gets undefined.
 */
@Injectable()
export class ConsoleLetters {
  private readonly logger = new Logger('MessagingConsole');

  constructor(
    private readonly gate: ConsoleGate,
    @Inject(MESSAGING_CONSOLE_OPTIONS) private readonly options: MessagingConsoleOptions,
  ) {}

  /** The request's `:queue` when the console shows it; otherwise answers 404. */
  queueOf(req: ConsoleRequest, res: ConsoleResponse, session: ConsoleSession): string | undefined {
    const queue = req.params.queue;
    if (this.options.deadLetterQueues.includes(queue)) return queue;
    this.gate.fail(res, session, 404, 'This console does not show that queue.');
    return undefined;
  }

  /** What `read` returns; when it throws (the broker could not be read), answers 502. */
  async fromBroker<T>(
    res: ConsoleResponse,
    session: ConsoleSession,
    read: () => Promise<T>,
  ): Promise<{ readonly value: T } | undefined> {
    try {
      return { value: await read() };
    } catch (error) {
      this.gate.fail(res, session, 502, brokerTrouble(error, this.logger));
      return undefined;
    }
  }

  /**
   * The message `:id` of the request's queue, read at the position its link names (`?at=`), with the first
   * `maxBytes` of its payload; 404 when the link has no position or another message (or none) is there now.
   */
  async open(
    req: ConsoleRequest,
    res: ConsoleResponse,
    session: ConsoleSession,
    maxBytes: number,
  ): Promise<OpenedLetter | undefined> {
    const queue = this.queueOf(req, res, session);
    if (!queue) return undefined;
    const position = positionFromParam(field(req.query, 'at'));
    if (!position) {
      this.gate.fail(res, session, 404, 'Open the message from its queue’s page.');
      return undefined;
    }
    const { redrive } = this.options;
    const read = await this.fromBroker(res, session, () =>
      redrive.inspectMessage(queue, position, req.params.id, maxBytes),
    );
    if (!read) return undefined;
    if (!read.value) {
      this.gate.fail(res, session, 404, 'That message is no longer there (redriven, or the queue changed).');
      return undefined;
    }
    return { queue, letter: read.value };
  }
}
