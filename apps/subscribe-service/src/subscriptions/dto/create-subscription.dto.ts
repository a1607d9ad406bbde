import { IsInt, Max, Min } from 'class-validator';

/**
 * The body of `POST /subscriptions`: `subscriberId` follows `authorId`. Decorators apply bottom-up, so the
 * type check runs first and a bad field is reported by the first rule it breaks.
 */
export class CreateSubscriptionDto {
  @Max(2_147_483_647)
  @Min(1)
  @IsInt()
  subscriberId!: number;

  @Max(2_147_483_647)
  @Min(1)
  @IsInt()
  authorId!: number;
}
