import { Inject, Injectable } from '@nestjs/common';
import { QueryRunner } from 'typeorm';
import { MESSAGING_LOGICAL_NAMES } from '../../messaging.constants';
import { NewOutboxRow } from '../outbox-row';
import { encodeLogicalMessage } from './logical-message-codec';
import { LogicalNames } from './logical-names';

/**
 * With `relay.mode: 'logical'`, how `OutboxService.add()` records a message: a transactional logical decoding
 * message in the caller's transaction (`pg_logical_emit_message(true, …)`), which PostgreSQL hands the slot
 * when, and only if, the transaction commits. No row, so nothing to mark or purge afterwards.
 */
@Injectable()
export class LogicalMessageWriter {
  constructor(@Inject(MESSAGING_LOGICAL_NAMES) private readonly names: LogicalNames) {}

  async write(queryRunner: QueryRunner, row: NewOutboxRow): Promise<void> {
    await queryRunner.query('select pg_logical_emit_message(true, $1, $2::text)', [
      this.names.prefix,
      encodeLogicalMessage(row),
    ]);
  }
}
