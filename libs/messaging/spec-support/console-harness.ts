import { ApproverKeyring } from '../src/redrive/approvals/approver-keyring';
import { generateApproverKeys } from '../src/redrive/approvals/approver-keys';
import {
  RecordedRedriveAuditEntry,
  RedriveAuditEntry,
  RedriveAuditFilter,
  RedriveLedger,
} from '../src/redrive/ledger/redrive-ledger.interface';
import { InspectedDeadLetterWithPayload } from '../src/redrive/inspected-dead-letter';
import { ReadCutOff } from '../src/redrive/read-budget';
import { MessagePosition, RedrivePlan } from '../src/redrive/redrive-plan';
import { RedrivePlanRequest } from '../src/redrive/redrive-service-options';
import { DeadLetterQuery } from '../src/redrive/dead-letter-search';
import { RedriveService } from '../src/redrive/redrive.service';
import { ConsoleGate } from '../src/console/console-gate';
import { ConsoleLetters } from '../src/console/console-letters';
import { ConsoleUser, MessagingConsoleOptions } from '../src/console/console-options.interface';
import { ConsoleRedrive } from '../src/console/console-redrive';
import { ConsoleController } from '../src/console/console.controller';
import { ConsoleFilesController } from '../src/console/console-files.controller';
import { ConsoleIncidentController } from '../src/console/console-incident.controller';
import { FakeResponse, fakeRequest } from './console-fakes';

/** The console's one dead-letter queue in these specs. */
export const DLQ = 'orders.billing.dlq';

/** Who may sign in: an operator, a viewer, a second operator. */
export const USERS: Record<string, ConsoleUser & { password: string }> = {
  alice: { name: 'alice', roles: ['operator'], password: 'alice-pw' },
  victor: { name: 'victor', roles: ['viewer'], password: 'victor-pw' },
  olga: { name: 'olga', roles: ['operator'], password: 'olga-pw' },
};

/** The approver's keys: bob is in the fake redrive's keyring. */
export const bob = generateApproverKeys('bob');

/** The CSRF token a page carries. */
export const csrfOf = (body: string) => /name="_csrf" value="([^"]+)"/.exec(body)?.[1];

/** The letter at the head of the DLQ (message `m-1`), with a payload of `bytes` bytes. */
export function letter(bytes: number): InspectedDeadLetterWithPayload {
  return {
    message: {
      position: { kind: 'queue', index: 0 },
      messageId: 'm-1',
      type: 'OrderPlaced',
      failureCategory: 'TRANSIENT',
      failureCode: 'DOWN',
      attempts: 1,
      originDestination: 'orders',
      lastFailureAt: null,
      redriveCount: 0,
      previousRedriveIds: [],
      fingerprint: 'sha256:00',
    },
    firstFailureAt: null,
    headers: { 'msg.id': 'm-1' },
    payload: { text: 'x'.repeat(Math.min(bytes, 1024)), bytes, truncated: bytes > 1024 },
  };
}

/** A plan of `source` with the head letter, as `plan()` seals it (the hash is not checked here). */
export function planOf(source: string, plannedBy: string, extra: Partial<RedrivePlan> = {}): RedrivePlan {
  return {
    version: 2,
    transport: 'rabbitmq',
    plannedBy,
    source,
    target: 'orders.billing',
    group: 'billing',
    createdAt: '2026-12-03T09:59:00.000Z',
    depth: 1,
    messages: [letter(0).message],
    hash: `sha256:plan-${plannedBy}`,
    ...extra,
  };
}

/** The redrive service's side the console uses, in memory: one letter, `m-1`, at the head. */
export class FakeRedrive {
  readonly transport = 'rabbitmq' as const;
  approvers = ApproverKeyring.parse({ version: 1, approvers: [bob.publicKey] });
  readonly topology = undefined;
  listError?: Error;
  inspectCalls = 0;
  /** What `approve()` (the check before an execution) throws; undefined: it is never reached. */
  approveError?: Error;
  approveCalls = 0;
  readonly inspectMessageCalls: Array<[string, MessagePosition, string | null, number]> = [];
  readonly searches: DeadLetterQuery[] = [];
  readonly planRequests: RedrivePlanRequest[] = [];
  async approve() {
    this.approveCalls += 1;
    throw this.approveError ?? new Error('not expected in this spec');
  }
  async list() {
    if (this.listError) throw this.listError;
    return [{ name: DLQ, exists: true, depth: 1 }];
  }
  /** What the byte budget left unread, on every read of dead letters. */
  cutOff?: ReadCutOff;
  async inspect() {
    this.inspectCalls += 1;
    return [letter(0)];
  }
  async inspectHead() {
    return { depth: 1, letters: await this.inspect(), ...(this.cutOff ? { cutOff: this.cutOff } : {}) };
  }
  async searchHead(source: string, query: DeadLetterQuery) {
    const letters = await this.search(source, query);
    return { depth: 1, letters, ...(this.cutOff ? { cutOff: this.cutOff } : {}) };
  }
  async inspectMessage(source: string, position: MessagePosition, id: string | null, max: number) {
    this.inspectMessageCalls.push([source, position, id, max]);
    return position.kind === 'queue' && position.index === 0 && id === 'm-1' ? letter(200 * 1024) : undefined;
  }
  async search(_source: string, query: DeadLetterQuery) {
    this.searches.push(query);
    return query.key === 'customer-1' || query.messageId === 'm-1' ? [letter(0)] : [];
  }
  /** A selection by ids takes `m-1` when picked and names the other ids not found, as the service does. */
  async plan(request: RedrivePlanRequest) {
    this.planRequests.push(request);
    const picked = request.selection?.by === 'ids' ? request.selection.messageIds : ['m-1'];
    const notFound = picked.filter((id) => id !== 'm-1');
    return planOf(request.source, request.plannedBy ?? 'admin', {
      selection: request.selection,
      messages: picked.includes('m-1') ? [letter(0).message] : [],
      ...(notFound.length > 0 ? { notFound } : {}),
    });
  }
}

/** A console on `FakeRedrive` and a ledger in memory, with each controller and a way to sign in. */
export function consoleHarness(extra: Partial<MessagingConsoleOptions> = {}) {
  const entries: RecordedRedriveAuditEntry[] = [];
  const historyCalls: RedriveAuditFilter[] = [];
  const recorded: RedriveAuditEntry[] = [];
  const ledger = {
    record: async (entry: RedriveAuditEntry) => void recorded.push(entry),
    history: async (filter: RedriveAuditFilter) => {
      historyCalls.push(filter);
      return entries.slice(-filter.limit);
    },
    verifyChain: async () => ({ intact: true, checked: entries.length }),
  } as unknown as RedriveLedger;
  const redrive = new FakeRedrive();
  const options: MessagingConsoleOptions = {
    redrive: redrive as unknown as RedriveService,
    ledger,
    authenticator: {
      authenticate: async (name, password) => {
        const user = USERS[name];
        return user?.password === password ? { name: user.name, roles: user.roles } : undefined;
      },
    },
    deadLetterQueues: [DLQ],
    payloadPreviewBytes: 1024,
    ...extra,
  };
  const gate = new ConsoleGate(options, '/console');
  const letters = new ConsoleLetters(gate, options);
  const plans = new ConsoleRedrive(options);
  /** A page request of `name`, signed in through the form. */
  const as = async (name: string) => {
    const form = new FakeResponse();
    gate.loginForm(fakeRequest({}), form);
    const answer = new FakeResponse();
    const token = form.cookies().messaging_console_login;
    await gate.signIn(
      fakeRequest(form.cookies(), { _csrf: token, name, password: USERS[name].password }),
      answer,
    );
    const cookies = { messaging_console_session: answer.cookies().messaging_console_session };
    return (
      more: { params?: Record<string, string>; query?: Record<string, string> } = {},
      body: Record<string, unknown> = {},
    ) => fakeRequest(cookies, body, more);
  };
  return {
    controller: new ConsoleController(gate, letters, plans, options),
    files: new ConsoleFilesController(gate, letters, options),
    incident: new ConsoleIncidentController(gate, letters, plans, options),
    options,
    redrive,
    entries,
    historyCalls,
    recorded,
    as,
  };
}
