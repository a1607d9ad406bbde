import { BadRequestException, ValidationError } from '@nestjs/common';

/** One invalid field of a request, named by its path in the body (`author.id`). */
export interface FieldError {
  readonly field: string;
  readonly messages: string[];
}

/** Flattens class-validator's error tree into one entry per invalid field. */
export function fieldErrors(errors: readonly ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const own = error.constraints ? [{ field, messages: Object.values(error.constraints) }] : [];
    return [...own, ...fieldErrors(error.children ?? [], field)];
  });
}

/** The 400 a request with invalid fields gets: it names every field and what is wrong with it. */
export function validationException(errors: ValidationError[]): BadRequestException {
  const fields = fieldErrors(errors);
  return new BadRequestException({
    statusCode: 400,
    error: 'Bad Request',
    message: `Invalid fields: ${fields.map((f) => f.field).join(', ')}`,
    errors: fields,
  });
}
