import { ValidationPipe } from '@nestjs/common';
import { NestExpressApplication } from '@nestjs/platform-express';
import { bodyErrorHandler } from './body-errors';
import { jsonBodyGuard } from './json-body-guard';
import { jsonOnly } from './json-only';
import { validationException } from './validation-errors';

/** The largest JSON body the services accept. */
export const DEFAULT_BODY_LIMIT = '16kb';

/** Options of `configureHttp()`. */
export interface HttpEdgeOptions {
  /** Largest JSON body. Default `16kb`; larger bodies get 413. */
  bodyLimit?: string;
}

/**
 * The HTTP edge every service shares: JSON bodies only (415 for a form or any other body) up to a limit (413
 * above it, 400 for malformed JSON, for nesting deeper than 32 levels and for text PostgreSQL cannot store),
 * and DTO validation that refuses unknown fields and names each bad one. Call before `listen()`.
 */
export function configureHttp(app: NestExpressApplication, options: HttpEdgeOptions = {}): void {
  const limit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
  // Before any parser: a body that is not JSON (a form, text) is refused, never parsed.
  app.use(jsonOnly());
  // Registered before Nest's own parsers, so Nest skips its default JSON parser (100kb limit).
  app.useBodyParser('json', { limit });
  app.use(bodyErrorHandler(limit));
  app.use(jsonBodyGuard());
  app.useGlobalPipes(
    new ValidationPipe({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      // One message per bad field: what is wrong first (a string where a number belongs), not every rule.
      stopAtFirstError: true,
      exceptionFactory: validationException,
    }),
  );
}
