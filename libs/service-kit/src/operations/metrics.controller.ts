import { Controller, Get, Res } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { MessagingMetrics } from 'nest-reliable-messaging';

/** Prometheus metrics of the messaging library (`GET /metrics`). */
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: MessagingMetrics) {}

  @Get()
  async scrape(@Res({ passthrough: true }) response: ServerResponse): Promise<string> {
    response.setHeader('Content-Type', this.metrics.contentType);
    return this.metrics.metrics();
  }
}
