import { IsInt, IsISO8601, IsNotEmpty, IsOptional, IsString, Max, Min, ValidateBy } from 'class-validator';
import { MaxCharacters } from '@app/service-kit';

/** Limits of a post, shared by the DTO and the table, in characters as PostgreSQL counts them (code points). */
export const POST_LIMITS = { title: 200, content: 10_000 } as const;

/** How far ahead a post's announcement may be scheduled: further is taken for a typo in the year. */
export const MAX_PUBLISH_AHEAD_MS = 366 * 24 * 60 * 60_000;

/**
 * The body of `POST /posts`. Unknown fields are refused; every bad field is named in the 400, with the first
 * rule it breaks. Decorators apply bottom-up, so the type check sits nearest the property and runs first.
 */
export class CreatePostDto {
  @Max(2_147_483_647)
  @Min(1)
  @IsInt()
  authorId!: number;

  @MaxCharacters(POST_LIMITS.title)
  @IsNotEmpty()
  @IsString()
  title!: string;

  @MaxCharacters(POST_LIMITS.content)
  @IsNotEmpty()
  @IsString()
  content!: string;

  /**
   * When to tell the author's followers (ISO 8601, e.g. `2026-12-24T08:00:00Z`), at most a year ahead.
   * Default: at once (so is a time already past).
   */
  @WithinAYear()
  @IsISO8601({ strict: true })
  @IsOptional()
  publishAt?: string;
}

/** The date string is at most `MAX_PUBLISH_AHEAD_MS` ahead of now. */
export function WithinAYear(): PropertyDecorator {
  return ValidateBy({
    name: 'withinAYear',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'string' && Date.parse(value) <= Date.now() + MAX_PUBLISH_AHEAD_MS,
      defaultMessage: () => 'publishAt must be at most a year ahead',
    },
  });
}
