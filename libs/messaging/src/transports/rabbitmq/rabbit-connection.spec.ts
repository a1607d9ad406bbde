import * as net from 'node:net';
import { RabbitConnection } from './rabbit-connection';
import { useQuietWarnings } from '../../../spec-support/quiet-warnings';

describe(RabbitConnection.name, () => {
  useQuietWarnings();

  it("opens its socket with Nagle's algorithm off", async () => {
    // A server that accepts and never speaks AMQP: the connect times out after the socket is set up.
    const sockets: net.Socket[] = [];
    const server = net.createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const noDelay = jest.spyOn(net.Socket.prototype, 'setNoDelay');
    try {
      const { port } = server.address() as net.AddressInfo;
      const connection = new RabbitConnection(`amqp://127.0.0.1:${port}`, 5, 'spec');
      const opened = connection.get().catch((error: unknown) => error);
      for (let i = 0; i < 100 && noDelay.mock.calls.length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(noDelay.mock.calls).toEqual([[true]]);
      sockets.forEach((socket) => socket.destroy());
      await opened;
      await connection.close();
    } finally {
      noDelay.mockRestore();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
