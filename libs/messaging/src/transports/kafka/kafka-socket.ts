import * as net from 'node:net';
import * as tls from 'node:tls';
import type { ISocketFactory } from 'kafkajs';

/** kafkajs's own keep-alive delay (its default socket factory). */
const KEEP_ALIVE_DELAY_MS = 60_000;

/**
 * kafkajs's default socket factory, with Nagle's algorithm off (`setNoDelay`): a produce request or a fetch
 * is written as soon as it is encoded instead of waiting for the broker's ACK of the previous segment
 * (with the broker's delayed ACK, up to 40 ms on Linux for a small request that follows another).
 */
export const noDelaySocketFactory: ISocketFactory = ({ host, port, ssl, onConnect }) => {
  const socket = ssl
    ? tls.connect({ host, port, ...(net.isIP(host) ? {} : { servername: host }), ...ssl }, onConnect)
    : net.connect({ host, port }, onConnect);
  socket.setKeepAlive(true, KEEP_ALIVE_DELAY_MS);
  socket.setNoDelay(true);
  return socket;
};
