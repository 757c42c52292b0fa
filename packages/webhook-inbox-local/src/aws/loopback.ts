import type { IncomingMessage } from 'node:http';
import { AddressInfo, Server } from 'node:net';

/** Listens on 127.0.0.1 (port 0 picks a free one) and returns the `http://` URL. */
export async function listenOnLoopback(server: Server, port = 0): Promise<string> {
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Closes a server that may never have started. */
export function closeServer(server: Server | undefined): Promise<void> {
  return new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
}

/** The whole body of a request or an answer. */
export function readBody(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}
