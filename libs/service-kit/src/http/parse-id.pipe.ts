import { BadRequestException, Injectable, PipeTransform } from '@nestjs/common';

/** The largest value of a PostgreSQL `integer` column. */
const MAX_ID = 2_147_483_647;

/** A route parameter that is a row id: a whole number from 1 to 2147483647, or 400 naming the parameter. */
@Injectable()
export class ParseIdPipe implements PipeTransform<string, number> {
  transform(value: string, metadata: { data?: string }): number {
    const id = /^\d{1,10}$/.test(value) ? Number(value) : Number.NaN;
    if (!Number.isInteger(id) || id < 1 || id > MAX_ID) {
      const name = metadata.data ?? 'id';
      throw new BadRequestException({
        statusCode: 400,
        error: 'Bad Request',
        message: `Invalid fields: ${name}`,
        errors: [{ field: name, messages: [`${name} must be a whole number from 1 to ${MAX_ID}`] }],
      });
    }
    return id;
  }
}
