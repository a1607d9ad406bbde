import { once } from 'node:events';
import { createServer, Server, Socket, connect } from 'node:net';
import * as amqp from 'amqplib';
import { createConnection } from 'mysql2/promise';
import { Client } from 'pg';
import { eventually } from '../../harness/eventually';
import { FaultProxy } from '../../harness/fault-proxy';
import { infraEnv } from '../../harness/infra';
import { uniqueName } from '../../harness/names';
import { proxyUrl } from '../../harness/proxied';

/** A server that echoes what it reads, and remembers it. */
async function echoServer(): Promise<{ server: Server; port: number; received: () => string }> {
  let received = '';
  const server = createServer((socket) =>
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString();
      socket.write(chunk);
    }),
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as { port: number }).port, received: () => received };
}

/** A client socket that collects what it reads and knows when it closed. */
async function client(
  port: number,
): Promise<{ socket: Socket; read: () => string; closed: Promise<unknown> }> {
  const socket = connect({ host: '127.0.0.1', port });
  let read = '';
  socket.on('data', (chunk: Buffer) => (read += chunk.toString()));
  socket.on('error', () => undefined);
  const closed = new Promise((resolve) => socket.once('close', resolve));
  await once(socket, 'connect');
  return { socket, read: () => read, closed };
}

describe(FaultProxy.name, () => {
  describe('byte-level faults', () => {
    let echo: Awaited<ReturnType<typeof echoServer>>;
    let proxy: FaultProxy;

    beforeEach(async () => {
      echo = await echoServer();
      proxy = await FaultProxy.start({ target: { host: '127.0.0.1', port: echo.port } });
    });

    afterEach(async () => {
      await proxy.close();
      echo.server.close();
    });

    it('forwards both ways, in order, also with a delay', async () => {
      const c = await client(proxy.port);
      c.socket.write('one ');
      await eventually(() => c.read() === 'one ');
      proxy.delay(50);
      ['two ', 'three ', 'four'].forEach((part) => c.socket.write(part));
      await eventually(() => c.read() === 'one two three four');
      c.socket.destroy();
    });

    it('cuts the connection after so many bytes in one direction; the bytes before pass', async () => {
      const c = await client(proxy.port);
      proxy.cutAfter(5, 'upstream');
      c.socket.write('12345678');
      await c.closed;
      expect(echo.received()).toBe('12345');
      expect(proxy.stats.cuts).toBe(1);
    });

    it('refuses new connections until healed; open ones go on', async () => {
      const open = await client(proxy.port);
      await proxy.refuse();
      await expect(client(proxy.port)).rejects.toThrow(/ECONNREFUSED/);
      open.socket.write('still here');
      await eventually(() => open.read() === 'still here');
      await proxy.heal();
      const again = await client(proxy.port);
      again.socket.write('back');
      await eventually(() => again.read() === 'back');
      [open, again].forEach((c) => c.socket.destroy());
    });

    it('black-holes: reads and never answers, new connections too; cuts them when it ends', async () => {
      const before = await client(proxy.port);
      proxy.blackHole();
      before.socket.write('into the void');
      const during = await client(proxy.port);
      during.socket.write('also lost');
      await eventually(() => proxy.stats.swallowed >= 2);
      expect(echo.received()).toBe('');
      await proxy.heal();
      await Promise.all([before.closed, during.closed]);
      const after = await client(proxy.port);
      after.socket.write('heard');
      await eventually(() => after.read() === 'heard');
      after.socket.destroy();
    });

    it('cuts every open connection at once', async () => {
      const clients = await Promise.all([client(proxy.port), client(proxy.port)]);
      await eventually(() => proxy.openConnections === 2);
      expect(proxy.cutAll()).toBe(2);
      await Promise.all(clients.map((c) => c.closed));
    });
  });

  describe('frames', () => {
    it('PostgreSQL: loses the answer to a COMMIT the server executed', async () => {
      const { proxy, url } = await proxyUrl(infraEnv().databaseUrl, 'postgres');
      const table = uniqueName('proxy_commit');
      const direct = new Client({ connectionString: infraEnv().databaseUrl });
      await direct.connect();
      const proxied = new Client({ connectionString: url });
      proxied.on('error', () => undefined);
      try {
        await direct.query(`create table ${table} (id int)`);
        await proxied.connect();
        await proxied.query('begin');
        await proxied.query(`insert into ${table} values (1)`);
        const lost = proxy.on({
          direction: 'downstream',
          match: (frame) => /^commit/i.test(frame.query ?? ''),
          action: 'cut',
        });
        await expect(proxied.query('commit')).rejects.toThrow(/terminated|closed|ECONNRESET/i);
        expect((await lost)[0].name).toBe('C'); // CommandComplete: the server had committed
        expect((await direct.query(`select id from ${table}`)).rows).toEqual([{ id: 1 }]);
      } finally {
        await direct.query(`drop table if exists ${table}`);
        await direct.end();
        await proxied.end().catch(() => undefined);
        await proxy.close();
      }
    });

    it('MariaDB: loses the answer to a COMMIT the server executed', async () => {
      const { proxy, url } = await proxyUrl(infraEnv().mariadbUrl, 'mysql');
      const table = uniqueName('proxy_commit');
      const direct = await createConnection({ uri: infraEnv().mariadbUrl });
      const proxied = await createConnection({ uri: url });
      proxied.on('error', () => undefined);
      try {
        await direct.query(`create table ${table} (id int) engine=InnoDB`);
        await proxied.query('begin');
        await proxied.query(`insert into ${table} values (1)`);
        const lost = proxy.on({
          direction: 'downstream',
          match: (frame) => /^commit/i.test(frame.query ?? ''),
          action: 'cut',
        });
        await expect(proxied.query('commit')).rejects.toThrow(/closed|lost|ECONNRESET/i);
        expect((await lost)[0].request?.name).toBe('COM_QUERY');
        const [rows] = await direct.query(`select id from ${table}`);
        expect(rows).toEqual([{ id: 1 }]);
      } finally {
        await direct.query(`drop table if exists ${table}`);
        await direct.end();
        proxied.destroy();
        await proxy.close();
      }
    });

    it('RabbitMQ: loses a publisher confirm with the connection; the broker has the message', async () => {
      const { proxy, url } = await proxyUrl(infraEnv().amqpUrl, 'amqp');
      const queue = uniqueName('proxy_confirm');
      const direct = await amqp.connect(infraEnv().amqpUrl);
      const proxied = await amqp.connect(url);
      proxied.on('error', () => undefined);
      try {
        const admin = await direct.createChannel();
        await admin.assertQueue(queue, { durable: false });
        const channel = await proxied.createConfirmChannel();
        channel.on('error', () => undefined);
        const lost = proxy.on({
          direction: 'downstream',
          match: (f) => f.name === 'basic.ack',
          action: 'cut',
        });
        const confirm = new Promise<unknown>((resolve) =>
          channel.sendToQueue(queue, Buffer.from('written'), {}, (error: unknown) => resolve(error)),
        );
        expect(await confirm).toBeInstanceOf(Error);
        await lost;
        await eventually(async () => (await admin.checkQueue(queue)).messageCount === 1);
        await admin.deleteQueue(queue);
      } finally {
        await direct.close();
        await proxied.close().catch(() => undefined);
        await proxy.close();
      }
    });
  });
});
