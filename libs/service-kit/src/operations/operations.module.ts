import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { HealthController } from './health.controller';
import { MetricsController } from './metrics.controller';

/** `GET /health` (terminus), `GET /health/live` and `GET /metrics`. Needs `MessagingModule` (global) in the application. */
@Module({ imports: [TerminusModule], controllers: [HealthController, MetricsController] })
export class OperationsModule {}
