import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { ConsoleMetrics, fetchMetricsText, figuresOf, parseMetrics } from './console-metrics';

const TEXT = `# HELP messaging_outbox_pending Outbox rows not yet published.
# TYPE messaging_outbox_pending gauge
messaging_outbox_pending{destination="post-create"} 3
messaging_outbox_oldest_pending_age_seconds{destination="post-create"} 12.5
messaging_outbox_published_total{destination="post-create"} 40
messaging_consumer_messages_total{group="g",destination="post-create",outcome="handled"} 38
messaging_consumer_messages_total{group="g",destination="post-create",outcome="duplicate"} 2
messaging_consumer_retries_total{group="g",destination="post-create",mode="inline"} 4
messaging_consumer_failed_attempts_total{group="g",destination="post-create",category="TRANSIENT"} 5
messaging_dead_lettered_total{group="g",destination="post-create",category="TRANSIENT"} 1
`;

describe(figuresOf.name, () => {
  it('turns a service’s metrics into per-destination and per-group figures', () => {
    expect(figuresOf('svc', parseMetrics(TEXT))).toEqual({
      service: 'svc',
      destinations: [
        {
          service: 'svc',
          destination: 'post-create',
          pending: 3,
          oldestPendingAgeSeconds: 12.5,
          publishedTotal: 40,
        },
      ],
      groups: [
        {
          service: 'svc',
          group: 'g',
          destination: 'post-create',
          handled: 38,
          duplicates: 2,
          retries: 4,
          failedByCategory: { TRANSIENT: 5 },
          deadLettered: 1,
        },
      ],
    });
  });

  // claim: C-109
  it('reads the scheduled messages waiting and when the next is due, when the service reports them', () => {
    const scheduled = `messaging_outbox_scheduled 4\nmessaging_outbox_next_scheduled_due_seconds 61.5\n`;
    expect(figuresOf('svc', parseMetrics(TEXT + scheduled)).scheduled).toEqual({
      waiting: 4,
      nextDueInSeconds: 61.5,
    });
    expect(figuresOf('svc', parseMetrics(TEXT + 'messaging_outbox_scheduled 0\n')).scheduled).toEqual({
      waiting: 0,
    });
    expect(figuresOf('svc', parseMetrics(TEXT)).scheduled).toBeUndefined();
  });
});

describe(ConsoleMetrics.name, () => {
  it('tells published per minute from readings at least a minute apart; lists a source that fails', async () => {
    let now = 0;
    let published = 40;
    const texts: Record<string, () => string> = {
      'http://a/metrics': () => `messaging_outbox_published_total{destination="d"} ${published}\n`,
      'http://b/metrics': () => {
        throw new Error('connection refused');
      },
    };
    const metrics = new ConsoleMetrics(
      [
        { name: 'a', url: 'http://a/metrics' },
        { name: 'b', url: 'http://b/metrics' },
      ],
      () => now,
      async (url) => texts[url](),
    );
    const [first, failing] = await metrics.read();
    expect(first.destinations[0].publishedPerMinute).toBeUndefined();
    expect(failing).toMatchObject({ service: 'b', error: 'connection refused' });
    now = 120_000;
    published = 100;
    expect((await metrics.read())[0].destinations[0].publishedPerMinute).toBe(30);
  });

  it('keeps a rate through a service restart, and says when a service that is down last answered', async () => {
    let now = 0;
    let published = 500;
    let up = true;
    const metrics = new ConsoleMetrics(
      [{ name: 'a', url: 'http://a/metrics' }],
      () => now,
      async () => {
        if (!up) throw new Error('no answer (ECONNREFUSED)');
        return `messaging_outbox_published_total{destination="d"} ${published}\n`;
      },
    );
    await metrics.read();
    now = 60_000;
    published = 560;
    await metrics.read();
    now = 90_000;
    up = false; // restarting
    expect((await metrics.read())[0]).toMatchObject({ error: 'no answer (ECONNREFUSED)', lastUpAt: 60_000 });
    now = 120_000;
    up = true;
    published = 30; // its counters began at 0 again
    const [after] = await metrics.read();
    expect(after.error).toBeUndefined();
    expect(after.lastUpAt).toBe(120_000);
    // 60 before the restart and 30 since, over two minutes: 45 a minute (a plain difference says nothing).
    expect(after.destinations[0].publishedPerMinute).toBe(45);
  });
});

describe(`${ConsoleMetrics.name} (consumer lag)`, () => {
  it('gives a group’s mean lag over the messages handled since the last reading', async () => {
    let [sum, count] = [2, 10];
    const metrics = new ConsoleMetrics(
      [{ name: 'a', url: 'http://a/metrics' }],
      () => 0,
      async () =>
        `messaging_consumer_lag_seconds_sum{group="g",destination="d"} ${sum}\n` +
        `messaging_consumer_lag_seconds_count{group="g",destination="d"} ${count}\n`,
    );
    const [first] = await metrics.read();
    expect(first.groups[0]).toMatchObject({ lag: { sumSeconds: 2, count: 10 }, meanLagSeconds: undefined });
    [sum, count] = [32, 20];
    expect((await metrics.read())[0].groups[0].meanLagSeconds).toBe(3);
  });
});

describe(fetchMetricsText.name, () => {
  let server: Server;
  let base = '';
  const hits: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      hits.push(req.url ?? '');
      if (req.url === '/redirect') {
        res.writeHead(302, { location: `${base}/elsewhere` }).end();
      } else if (req.url === '/huge') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const line = Buffer.alloc(64 * 1024, 'a');
        let sent = 0;
        const more = () => {
          while (sent < 160 && res.write(line)) sent += 1;
          if (sent < 160) res.once('drain', more);
          else res.end();
        };
        res.on('close', () => (sent = 160));
        more();
      } else if (req.url === '/fails') {
        res.writeHead(500).end('internal details of 10.0.3.7');
      } else {
        res.writeHead(200).end('messaging_outbox_pending{destination="d"} 3\n');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const limits = { timeoutMs: 10_000, maxBytes: 1024 * 1024 };

  it('reads a small /metrics', async () => {
    await expect(fetchMetricsText(`${base}/metrics`, limits)).resolves.toContain('messaging_outbox_pending');
  });

  // claim: C-81
  it('refuses a redirect instead of following it', async () => {
    hits.length = 0;
    await expect(fetchMetricsText(`${base}/redirect`, limits)).rejects.toThrow(
      'answered 302, a redirect (not followed)',
    );
    expect(hits).toEqual(['/redirect']);
  });

  it('stops reading past the limit', async () => {
    await expect(fetchMetricsText(`${base}/huge`, limits)).rejects.toThrow('sent more than 1048576 bytes');
  });

  it('says what went wrong without the URL or the answer', async () => {
    const failed = fetchMetricsText(`${base}/fails`, limits);
    await expect(failed).rejects.toThrow(/^answered 500$/);
    const closed = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    await expect(fetchMetricsText(`http://127.0.0.1:${closed}/metrics`, limits)).rejects.toThrow(
      /^no answer \(ECONNREFUSED\)$/,
    );
  });
});
