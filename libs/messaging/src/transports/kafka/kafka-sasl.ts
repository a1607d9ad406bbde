import { SASLOptions } from 'kafkajs';
import { KafkaSaslOptions } from '../../messaging-options.interface';

/** The kafkajs form of a SASL login (its types want the mechanism narrowed). */
export function kafkaSasl(sasl: KafkaSaslOptions | undefined): SASLOptions | undefined {
  if (!sasl) return undefined;
  const { username, password } = sasl;
  switch (sasl.mechanism) {
    case 'plain':
      return { mechanism: 'plain', username, password };
    case 'scram-sha-256':
      return { mechanism: 'scram-sha-256', username, password };
    case 'scram-sha-512':
      return { mechanism: 'scram-sha-512', username, password };
  }
}
