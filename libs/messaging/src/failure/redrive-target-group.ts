import { MessageHeaders } from '../envelope/message-headers';

/**
 * True when a delivery is a redriven copy meant for another consumer group (`msg.redrive-group`): on Kafka a
 * redrive goes back to the destination topic, which every group reads, and only the group that failed the
 * message handles it again; the others skip it, however long ago their inbox forgot it.
 */
export function isRedriveForAnotherGroup(headers: Readonly<Record<string, string>>, group: string): boolean {
  const target = headers[MessageHeaders.REDRIVE_GROUP];
  return headers[MessageHeaders.REDRIVE_ID] !== undefined && target !== undefined && target !== group;
}
