import { buildMessage, ValidateBy, ValidationOptions } from 'class-validator';

/**
 * The string has at most `max` characters as PostgreSQL's `varchar(n)` counts them: Unicode code points.
 * class-validator's `@MaxLength` counts differently (a variation selector as nothing), so a title it
 * accepts could still be too long for the column (a 500). Same message as `@MaxLength`.
 */
export function MaxCharacters(max: number, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'maxCharacters',
      constraints: [max],
      validator: {
        validate: (value: unknown) => typeof value === 'string' && [...value].length <= max,
        defaultMessage: buildMessage(
          (each) => `${each}$property must be shorter than or equal to $constraint1 characters`,
          options,
        ),
      },
    },
    options,
  );
}
