/**
 * A TCP pass-through in front of an emulator, for the local twin and the fault-injection run:
 * the handlers talk to the proxy, and the proxy can be taken down (new and open connections are
 * cut) and brought back, which is what a store or queue outage looks like from a client. The
 * emulator and its data are untouched.
 */
import { createServer, Server, Socket } from 'node:net';
import { closeServer, listenOnLoopback } from './loopback';

export class FaultProxy {
  private server?: Server;
  private down = false;
  private readonly sockets = new Set<Socket>();

  constructor(private readonly target: { host: string; port: number }) {}

  async start(port = 0): Promise<string> {
    this.server = createServer((client) => {
      if (this.down) {
        client.destroy();
        return;
      }
      const upstream = new Socket();
      this.track(client);
      this.track(upstream);
      upstream.connect(this.target.port, this.target.host);
      client.pipe(upstream).pipe(client);
      const close = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', close);
      upstream.on('error', close);
      client.on('close', close);
      upstream.on('close', close);
    });
    return listenOnLoopback(this.server, port);
  }

  /** Cuts every connection and refuses new ones until `restore()`. */
  takeDown(): void {
    this.down = true;
    for (const socket of this.sockets) socket.destroy();
  }

  restore(): void {
    this.down = false;
  }

  get isDown(): boolean {
    return this.down;
  }

  async stop(): Promise<void> {
    this.takeDown();
    await closeServer(this.server);
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
  }
}

/** Host and port of an `http://host:port` endpoint. */
export function endpointTarget(endpoint: string): { host: string; port: number } {
  const url = new URL(endpoint);
  return { host: url.hostname, port: Number(url.port) };
}
