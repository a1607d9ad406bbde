import { MessagePosition } from '../../redrive/planned-message';

/** A position in a message link: `q3` (RabbitMQ, from the head), `p1-42` (Kafka, partition and offset). */
export function positionParam(position: MessagePosition): string {
  return position.kind === 'queue' ? `q${position.index}` : `p${position.partition}-${position.offset}`;
}
