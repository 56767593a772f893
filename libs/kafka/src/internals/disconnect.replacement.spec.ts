import { createConnection, createServer, type Socket } from 'node:net';

import {
  type ConnectionInternals,
  installDisconnectReplacement,
  wrapDisconnect,
} from './disconnect.replacement';
import { KafkajsVersionError } from './kafkajs-version';

/** kafkajs's Connection as far as the wrapper sees it: disconnect ends and unrefs its socket. */
class FakeConnection implements ConnectionInternals {
  constructor(public socket: Socket | null) {}

  disconnect(): Promise<boolean> {
    if (this.socket) {
      this.socket.end();
      this.socket.unref();
    }
    return Promise.resolve(true);
  }
}
wrapDisconnect(FakeConnection.prototype);

/** A socket to a port nobody listens on, once its connection was refused. */
async function refusedSocket(): Promise<Socket> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  const socket = createConnection(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('error', resolve));
  return socket;
}

describe(wrapDisconnect.name, () => {
  it('adds no connect listener to a refused socket, however often it disconnects', async () => {
    const socket = await refusedSocket();
    const connection = new FakeConnection(socket);
    for (let i = 0; i < 12; i += 1) await connection.disconnect();
    expect(socket.listenerCount('connect')).toBe(0);
    expect(connection.socket).toBeNull();
  });

  it('ends a socket that is still open', async () => {
    const server = createServer((s) => s.on('error', () => undefined));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const socket = createConnection(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const connection = new FakeConnection(socket);
    await expect(connection.disconnect()).resolves.toBe(true);
    expect(socket.writableEnded).toBe(true);
    socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
});

describe(installDisconnectReplacement.name, () => {
  it('refuses another kafkajs than the pinned one', () => {
    expect(() => installDisconnectReplacement('2.3.0')).toThrow(KafkajsVersionError);
  });
});
