/**
 * Names of the destinations the library derives for a consumer group, the same on both transports:
 * Kafka topics, or RabbitMQ queues (the work queue is the group's queue on the destination's exchange).
 */
export const destinationNames = {
  /** RabbitMQ: the group's work queue. */
  workQueue: (destination: string, group: string) => `${destination}.${group}`,
  /** The group's dead-letter destination. */
  deadLetter: (destination: string, group: string) => `${destination}.${group}.dlq`,
  /** The group's retry destination for one delay tier. */
  retry: (destination: string, group: string, tierMs: number) => `${destination}.${group}.retry.${tierMs}ms`,
};
