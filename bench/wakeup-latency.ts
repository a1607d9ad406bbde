/**
 * The machine's own latency at a rate, with no library in the path (issue 39: "latency must not rise as the
 * rate falls: find the mechanism"). A message goes round a ring of processes over loopback TCP (Nagle off),
 * each a plain Node process that forwards what it reads; the bench process sends one at the offered rate
 * and times its return. Every hop is a process woken by the network, as in the library's path (writer,
 * PostgreSQL's backend and walsender, the relay, the broker, the consumer): if a hop costs more when the
 * machine is idle between messages, the ring shows it without any of our code.
 *
 * Each rate runs idle, then beside a spinner (a process that keeps one core busy, so the CPUs do not go idle
 * between messages): the difference is what waking an idle CPU costs here.
 *
 *   npx tsx bench/wakeup-latency.ts [--hops 5] [--rates 25,50,100,200,400,800,1600] [--seconds 4]
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as net from 'node:net';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';

const FORWARDER = `
const net = require('node:net');
const [listenPort, nextPort] = process.argv.slice(1).map(Number);
let next;
const server = net.createServer((socket) => {
  socket.setNoDelay(true);
  socket.on('data', (chunk) => next.write(chunk));
});
server.listen(listenPort || 0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', (m) => {
  next = net.connect(m.nextPort, '127.0.0.1', () => process.send({ connected: true }));
  next.setNoDelay(true);
});
`;

const SPINNER = 'for (;;) {}';

interface Options {
  hops: number;
  rates: number[];
  seconds: number;
}

function parse(argv: string[]): Options {
  const options: Options = { hops: 5, rates: [25, 50, 100, 200, 400, 800, 1600], seconds: 4 };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (flag === '--hops') options.hops = Number(value);
    else if (flag === '--rates') options.rates = value.split(',').map(Number);
    else if (flag === '--seconds') options.seconds = Number(value);
    else throw new Error(`unknown option ${flag}`);
  }
  return options;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function ring(hops: number): Promise<{ send: net.Socket; back: net.Socket; children: ChildProcess[] }> {
  const children: ChildProcess[] = [];
  const ports: number[] = [];
  for (let i = 0; i < hops; i++) {
    const child = spawn(process.execPath, ['-e', FORWARDER], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    children.push(child);
    const [message] = (await once(child, 'message')) as [{ port: number }];
    ports.push(message.port);
  }
  const home = net.createServer();
  home.listen(0, '127.0.0.1');
  await once(home, 'listening');
  const backPromise = once(home, 'connection') as Promise<[net.Socket]>;
  for (let i = 0; i < hops; i++) {
    children[i].send({ nextPort: i + 1 < hops ? ports[i + 1] : (home.address() as net.AddressInfo).port });
    await once(children[i], 'message');
  }
  const [back] = await backPromise;
  home.close();
  back.setNoDelay(true);
  const send = net.connect(ports[0], '127.0.0.1');
  send.setNoDelay(true);
  await once(send, 'connect');
  return { send, back, children };
}

interface Round {
  p50: number;
  p99: number;
  max: number;
  /** Times a CPU entered an idle state that halts (not POLL) per message sent, from /sys (cpuidle). */
  haltsPerMessage: number;
}

/** Entries into the CPUs' halting idle states so far (cpuidle's `usage`, every state but POLL); 0 without cpuidle. */
function halts(): number {
  const root = '/sys/devices/system/cpu';
  let total = 0;
  for (const cpu of readdirSync(root).filter((name) => /^cpu\d+$/.test(name))) {
    let states: string[];
    try {
      states = readdirSync(`${root}/${cpu}/cpuidle`).filter((name) => name.startsWith('state'));
    } catch {
      continue;
    }
    for (const state of states) {
      if (readFileSync(`${root}/${cpu}/cpuidle/${state}/name`, 'utf8').trim() === 'POLL') continue;
      total += Number(readFileSync(`${root}/${cpu}/cpuidle/${state}/usage`, 'utf8'));
    }
  }
  return total;
}

async function measure(rate: number, seconds: number, send: net.Socket, back: net.Socket): Promise<Round> {
  const rtts: number[] = [];
  const sentAt = new Map<number, bigint>();
  let buffer = '';
  const onData = (chunk: Buffer): void => {
    const at = process.hrtime.bigint();
    buffer += chunk.toString();
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const id = Number(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
      const t = sentAt.get(id);
      if (t !== undefined) rtts.push(Number(at - t) / 1e6);
      sentAt.delete(id);
    }
  };
  back.on('data', onData);
  const total = Math.max(200, Math.round(rate * seconds));
  const halted = halts();
  const start = performance.now();
  for (let id = 0; id < total; id++) {
    const wait = start + (id * 1000) / rate - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    sentAt.set(id, process.hrtime.bigint());
    send.write(`${id}\n`);
  }
  const haltsPerMessage = (halts() - halted) / total;
  await new Promise((resolve) => setTimeout(resolve, 500));
  back.off('data', onData);
  rtts.sort((a, b) => a - b);
  return {
    p50: percentile(rtts, 50),
    p99: percentile(rtts, 99),
    max: rtts[rtts.length - 1],
    haltsPerMessage,
  };
}

async function main(): Promise<void> {
  const options = parse(process.argv.slice(2));
  const { send, back, children } = await ring(options.hops);
  const f = (n: number): string => n.toFixed(2).padStart(7);
  console.log(`a ring of ${options.hops} Node processes over loopback TCP: round trip, ms`);
  console.log(
    ' rate/s  idle: p50     p99     max halts/msg | beside a spinner: p50     p99     max halts/msg',
  );
  try {
    for (const rate of options.rates) {
      const idle = await measure(rate, options.seconds, send, back);
      const spinner = spawn(process.execPath, ['-e', SPINNER], { stdio: 'ignore' });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const busy = await measure(rate, options.seconds, send, back);
      spinner.kill('SIGKILL');
      console.log(
        `${String(rate).padStart(7)}   ${f(idle.p50)} ${f(idle.p99)} ${f(idle.max)} ${f(idle.haltsPerMessage)} |` +
          `                ${f(busy.p50)} ${f(busy.p99)} ${f(busy.max)} ${f(busy.haltsPerMessage)}`,
      );
    }
  } finally {
    send.destroy();
    back.destroy();
    for (const child of children) child.kill('SIGKILL');
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
