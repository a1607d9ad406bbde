import { Body, Controller, HttpCode, INestApplication, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { IsString, MaxLength } from 'class-validator';
import { configureHttp } from '@app/service-kit';
import { httpRequest } from '../../../tools/demo/http-request';

class CreateThingDto {
  @IsString()
  @MaxLength(100_000)
  name!: string;
}

const received: CreateThingDto[] = [];

@Controller('things')
class ThingsController {
  @Post()
  @HttpCode(201)
  create(@Body() dto: CreateThingDto): CreateThingDto {
    received.push(dto);
    return dto;
  }
}

@Module({ controllers: [ThingsController] })
class ThingsModule {}

/**
 * Issue 15, point 9: the HTTP edge the services share takes JSON only. Form-encoded bodies (which Nest
 * parses by default, up to 100 kB, past the JSON limit and the JSON guard) are refused before any parser.
 */
describe('The services’ HTTP edge', () => {
  let app: INestApplication;
  let url: string;

  beforeAll(async () => {
    const nest = await NestFactory.create<NestExpressApplication>(ThingsModule, { logger: false });
    configureHttp(nest);
    await nest.listen(0, '127.0.0.1');
    app = nest;
    url = `${await nest.getUrl()}/things`.replace('[::1]', '127.0.0.1');
  });

  afterAll(async () => {
    await app.close();
  });

  it('takes JSON', async () => {
    const answer = await httpRequest('POST', url, JSON.stringify({ name: 'a' }));
    expect(answer.status).toBe(201);
  });

  it('refuses form-encoded bodies, small or over the JSON limit, before parsing them', async () => {
    received.length = 0;
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const small = await httpRequest('POST', url, 'name=a', 10_000, form);
    const large = await httpRequest('POST', url, `name=${'x'.repeat(50_000)}`, 10_000, form);
    expect([small.status, large.status]).toEqual([415, 415]);
    const body = JSON.parse(small.text) as { statusCode: number; message: string };
    expect(body.statusCode).toBe(415);
    expect(body.message).toContain('JSON');
    expect(received).toEqual([]);
  });
});
