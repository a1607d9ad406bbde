import * as net from 'node:net';
import { noDelaySocketFactory } from './kafka-socket';

describe('noDelaySocketFactory', () => {
  it("connects like kafkajs's own factory, with Nagle's algorithm off and keep-alive on", async () => {
    const server = net.createServer((socket) => socket.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const noDelay = jest.spyOn(net.Socket.prototype, 'setNoDelay');
    const keepAlive = jest.spyOn(net.Socket.prototype, 'setKeepAlive');
    try {
      const { port } = server.address() as net.AddressInfo;
      let socket!: net.Socket;
      await new Promise<void>((resolve) => {
        socket = noDelaySocketFactory({ host: '127.0.0.1', port, ssl: undefined!, onConnect: resolve });
      });
      expect(noDelay.mock.contexts).toContain(socket);
      expect(noDelay.mock.calls[noDelay.mock.contexts.indexOf(socket)]).toEqual([true]);
      expect(keepAlive).toHaveBeenCalledWith(true, 60_000);
      socket.destroy();
    } finally {
      noDelay.mockRestore();
      keepAlive.mockRestore();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
