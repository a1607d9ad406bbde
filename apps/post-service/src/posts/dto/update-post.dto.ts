import { IsISO8601, IsNotEmpty, IsOptional, IsString } from 'class-validator';
import { MaxCharacters } from '@app/service-kit';
import { POST_LIMITS, WithinAYear } from './create-post.dto';

/** The body of `PATCH /posts/:id`: the fields to change, each as `POST /posts` takes it; the author stays. */
export class UpdatePostDto {
  @MaxCharacters(POST_LIMITS.title)
  @IsNotEmpty()
  @IsString()
  @IsOptional()
  title?: string;

  @MaxCharacters(POST_LIMITS.content)
  @IsNotEmpty()
  @IsString()
  @IsOptional()
  content?: string;

  /** A new time to tell the followers, while the announcement is still scheduled (a time past: at once). */
  @WithinAYear()
  @IsISO8601({ strict: true })
  @IsOptional()
  publishAt?: string;
}
