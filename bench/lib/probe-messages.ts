/** What the bench and a probe process (`probe-process.main.ts`) say to each other. */
import { TransportKind } from './plan';
import { StatementCounts } from './statement-census';

/** What runs in the process: the library's inbox consumer, or a raw reader of the destination. */
export type ProbeRole =
  | { kind: 'consumer'; databaseUrl: string; schema: string; group: string }
  | { kind: 'witness'; queue?: string }
  | { kind: 'relay'; databaseUrl: string; schema: string; batchSize: number };

export interface ProbeProcessOptions {
  transport: TransportKind;
  destination: string;
  role: ProbeRole;
}

/** Messages between the bench and the process (`probe-process.main.ts`). */
export type ProbeMessage =
  /** The process loaded its modules and waits for a role. */
  | { type: 'ready' }
  | { type: 'role'; options: ProbeProcessOptions }
  | { type: 'started' }
  | { type: 'failed'; message: string }
  | { type: 'start'; run: string; seq: number; at: number }
  | { type: 'ping'; id: number }
  | { type: 'pong'; id: number; at: number }
  | { type: 'wake' }
  | { type: 'round'; confirmed: number }
  /** The statements the process sent to its database since the last ask, by kind (`StatementCensus`). */
  | { type: 'statements' }
  | { type: 'statementCounts'; counts: StatementCounts }
  /** Ends the role (the application closes); the process waits for the next one. */
  | { type: 'release' }
  | { type: 'released' }
  | { type: 'stop' };
