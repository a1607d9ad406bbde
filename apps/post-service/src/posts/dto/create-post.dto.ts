import { IsInt, IsNotEmpty, IsString, Max, Min } from 'class-validator';
import { MaxCharacters } from '@app/service-kit';

/** Limits of a post, shared by the DTO and the table, in characters as PostgreSQL counts them (code points). */
export const POST_LIMITS = { title: 200, content: 10_000 } as const;

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
}
