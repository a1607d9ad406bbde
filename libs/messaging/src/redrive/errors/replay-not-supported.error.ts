import { MessagingError } from '../../errors/messaging.error';

/**
 * Replay asked of a broker that keeps nothing to replay from: on RabbitMQ, a destination without a journal
 * (a queue forgets what it delivered; a replay reads the destination's journal, a stream queue that must
 * exist before the messages to replay were published: docs/guide/08-redrive.md, Replay a window).
 */
export class ReplayNotSupportedError extends MessagingError {
  constructor(
    /** The broker the replay was asked of. */
    readonly transport: string,
    /** The destination asked for, when it has no journal. */
    readonly destination?: string,
    /** The journal it would have: `<destination>:journal`. */
    readonly journal?: string,
  ) {
    super(
      destination === undefined || journal === undefined
        ? `Replay refused: ${transport} keeps no record of delivered messages to replay from.`
        : `Replay refused: ${destination} keeps no journal (the stream queue '${journal}' does not exist), and ` +
            `a ${transport} queue forgets what it delivered. Create it as an admin: add ` +
            `{ "journals": [{ "destination": "${destination}", "maxAge": "7D" }] } to the topology file and run ` +
            '`nest-messaging topology apply --file <file>`, or give the services the transport option ' +
            `journals: { '${destination}': { maxAge: '7D' } } with topology: 'declare'. It keeps what is ` +
            'published after it exists, for its retention.',
    );
    this.name = 'ReplayNotSupportedError';
  }
}
