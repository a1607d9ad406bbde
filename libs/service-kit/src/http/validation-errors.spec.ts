import type { ValidationError } from '@nestjs/common';
import { fieldErrors, validationException } from './validation-errors';

/** class-validator's error shape (Nest exports it as a type only). */
function error(
  property: string,
  constraints?: Record<string, string>,
  children: ValidationError[] = [],
): ValidationError {
  return { property, constraints, children };
}

describe(fieldErrors.name, () => {
  it('gives one entry per invalid field, nested fields by their path', () => {
    expect(
      fieldErrors([
        error('authorId', { isInt: 'authorId must be an integer number' }),
        error('author', undefined, [error('name', { isString: 'name must be a string' })]),
      ]),
    ).toEqual([
      { field: 'authorId', messages: ['authorId must be an integer number'] },
      { field: 'author.name', messages: ['name must be a string'] },
    ]);
  });
});

describe(validationException.name, () => {
  it('is a 400 that names the fields', () => {
    const exception = validationException([
      error('title', { isNotEmpty: 'title should not be empty' }),
      error('extra', { whitelistValidation: 'property extra should not exist' }),
    ]);
    expect(exception.getStatus()).toBe(400);
    expect(exception.getResponse()).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      message: 'Invalid fields: title, extra',
      errors: [
        { field: 'title', messages: ['title should not be empty'] },
        { field: 'extra', messages: ['property extra should not exist'] },
      ],
    });
  });
});
