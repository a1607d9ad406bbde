import { Controller, Get } from '@nestjs/common';
import { RedriveService } from 'nest-reliable-messaging/redrive';
import { AdminConnections } from './admin-connections';

/** `GET /health/live`: the process answers (for process managers and the demo's start-up wait). */
@Controller('health')
export class HealthController {
  private readonly redrive: RedriveService;

  constructor(connections: AdminConnections) {
    this.redrive = connections.redrive;
  }

  @Get('live')
  live(): { status: 'ok'; transport: { kind: string; connected: boolean }; consumers: string[] } {
    return { status: 'ok', transport: { kind: this.redrive.transport, connected: true }, consumers: [] };
  }
}
