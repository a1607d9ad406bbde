import { ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { MoreThan, QueryFailedError, Repository } from 'typeorm';
import { CreateSubscriptionDto } from './dto/create-subscription.dto';
import { Subscription } from './subscription.entity';

@Injectable()
export class SubscriptionsService {
  constructor(@InjectRepository(Subscription) private readonly subscriptions: Repository<Subscription>) {}

  /** Subscribes; a pair that is already subscribed is a conflict. */
  async subscribe(input: CreateSubscriptionDto): Promise<Subscription> {
    try {
      return await this.subscriptions.save(
        this.subscriptions.create({ subscriberId: input.subscriberId, authorId: input.authorId }),
      );
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new ConflictException(
          `Subscriber ${input.subscriberId} already follows author ${input.authorId}.`,
        );
      }
      throw error;
    }
  }

  async unsubscribe(id: number): Promise<void> {
    const result = await this.subscriptions.delete({ id });
    if (!result.affected) throw new NotFoundException(`Subscription ${id} does not exist.`);
  }

  /**
   * The subscribers of an author, in the order they subscribed, `pageSize` at a time: an author may have
   * more followers than one statement should carry (keyset pages on the subscription id).
   */
  async *subscriberPages(authorId: number, pageSize: number): AsyncGenerator<number[]> {
    let after = 0;
    for (;;) {
      const rows = await this.subscriptions.find({
        select: { id: true, subscriberId: true },
        where: { authorId, id: MoreThan(after) },
        order: { id: 'ASC' },
        take: pageSize,
      });
      if (rows.length > 0) yield rows.map((row) => row.subscriberId);
      if (rows.length < pageSize) return;
      after = rows[rows.length - 1].id;
    }
  }
}

/** PostgreSQL's unique_violation, MySQL's and MariaDB's ER_DUP_ENTRY. */
function isUniqueViolation(error: unknown): boolean {
  const code = error instanceof QueryFailedError ? (error.driverError as { code?: string }).code : undefined;
  return code === '23505' || code === 'ER_DUP_ENTRY';
}
