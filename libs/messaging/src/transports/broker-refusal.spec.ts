import { brokerRefusal, describeRefusal } from './broker-refusal';

/** What amqplib and kafkajs threw here, against RabbitMQ 3.10 and Kafka 4.4 (see the cases' names). */
const named = (name: string, message: string, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(message), { name }, extra);

describe(brokerRefusal.name, () => {
  it.each([
    [
      'RabbitMQ, wrong password',
      'rabbitmq' as const,
      new Error(
        'Handshake terminated by server: 403 (ACCESS-REFUSED) with message "ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN."',
      ),
      'transport.url',
    ],
    [
      'RabbitMQ, a virtual host that does not exist',
      'rabbitmq' as const,
      new Error('Expected ConnectionOpenOk; got <ConnectionClose channel:0>'),
      'transport.url',
    ],
    [
      'Kafka, the controller port',
      'kafka' as const,
      named(
        'KafkaJSServerDoesNotSupportApiKey',
        'The Kafka server does not support the requested API version',
      ),
      'transport.brokers',
    ],
    [
      'Kafka, SASL on a listener without it',
      'kafka' as const,
      named('KafkaJSProtocolError', 'Request is not valid given the current SASL state', {
        type: 'ILLEGAL_SASL_STATE',
      }),
      'transport.sasl',
    ],
    [
      'Kafka, a SASL login refused, inside the retries error',
      'kafka' as const,
      named('KafkaJSNumberOfRetriesExceeded', 'x', {
        cause: named('KafkaJSSASLAuthenticationError', 'SASL SCRAM SHA512 authentication failed'),
      }),
      'transport.sasl',
    ],
  ])('%s: permanent, names %s', (_name, kind, error, setting) => {
    const refusal = brokerRefusal(kind, error);
    expect(refusal?.setting).toBe(setting);
    expect(describeRefusal(refusal!)).toContain(`Retrying will not help: fix ${setting}.`);
  });

  it.each([
    [
      'rabbitmq' as const,
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5999'), { code: 'ECONNREFUSED' }),
    ],
    [
      'kafka' as const,
      named('KafkaJSNumberOfRetriesExceeded', 'Connection error: connect ECONNREFUSED 127.0.0.1:9999', {
        cause: named('KafkaJSConnectionError', 'Connection error: connect ECONNREFUSED 127.0.0.1:9999'),
      }),
    ],
    ['kafka' as const, 'not an error'],
  ])('%s: an outage that may heal is not a refusal', (kind, error) => {
    expect(brokerRefusal(kind, error)).toBeUndefined();
  });
});
