import { Module } from '@nestjs/common';
import { HealthController } from './health.controller';
import { MetricsController } from './metrics.controller';

/** `GET /health` and `GET /metrics`. Needs `MessagingModule` (global) in the application. */
@Module({ controllers: [HealthController, MetricsController] })
export class OperationsModule {}
