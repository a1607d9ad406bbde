import { MessagingError } from './messaging.error';

/**
 * A feature the application uses needs an optional peer dependency that is not installed (the Kafka
 * transport needs `kafkajs`, the RabbitMQ transport `amqplib`, ...). Raised at startup; the message gives
 * the install command.
 */
export class MissingPeerDependencyError extends MessagingError {
  /** The command that installs the missing package, e.g. `npm i kafkajs@^2.2.4`. */
  readonly installCommand: string;

  constructor(
    /** The package that is missing, e.g. `kafkajs`. */
    readonly packageName: string,
    /** What needs it, e.g. `The Kafka transport`. */
    readonly feature: string,
    /** The version to install: a range, or the major of `@nestjs/core` for a Nest package. */
    version: string,
  ) {
    const installCommand = `npm i ${/\s/.test(version) ? `"${packageName}@${version}"` : `${packageName}@${version}`}`;
    super(
      `${feature} needs the package '${packageName}', which is not installed in this application. ` +
        `Install it: ${installCommand}`,
    );
    this.name = 'MissingPeerDependencyError';
    this.installCommand = installCommand;
  }
}
