import { ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { QueryFailedError, Repository } from 'typeorm';
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

  /** The subscribers of an author, in the order they subscribed. */
  async subscribersOf(authorId: number): Promise<number[]> {
    const rows = await this.subscriptions.find({
      select: { subscriberId: true },
      where: { authorId },
      order: { id: 'ASC' },
    });
    return rows.map((row) => row.subscriberId);
  }
}

/** PostgreSQL's unique_violation, MySQL's and MariaDB's ER_DUP_ENTRY. */
function isUniqueViolation(error: unknown): boolean {
  const code = error instanceof QueryFailedError ? (error.driverError as { code?: string }).code : undefined;
  return code === '23505' || code === 'ER_DUP_ENTRY';
}
