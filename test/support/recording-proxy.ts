/**
 * A proxy on loopback in front of an API (a provider's fake) that passes every request and its
 * answer through unchanged and records both, so that a test can judge what went over the wire
 * whoever made the request. The `Host` header is passed on as the client sent it: an API that
 * writes absolute links (GitHub's `link` header) names the proxy, as the real one names itself.
 */
import { createServer, request as httpRequest, Server } from 'node:http';
import { closeServer, listenOnLoopback, readBody } from '#twin/testing';
import { HttpExchange } from './openapi-judge';

export interface RecordedExchange extends HttpExchange {
  readonly requestHeaders: Readonly<Record<string, string>>;
}

export class RecordingProxy {
  readonly exchanges: RecordedExchange[] = [];
  private server?: Server;

  constructor(private readonly target: string) {}

  /** Starts it; its base URL. */
  async start(): Promise<string> {
    const target = new URL(this.target);
    this.server = createServer((req, res) => {
      void readBody(req).then((requestBody) => {
        const forwarded = httpRequest(
          { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent: false },
          (answer) =>
            void readBody(answer).then((bytes) => {
              this.exchanges.push({
                method: req.method ?? '',
                url: req.url ?? '',
                requestHeaders: flatten(req.headers),
                status: answer.statusCode ?? 0,
                headers: flatten(answer.headers),
                body: bytes.toString('utf8'),
              });
              res.writeHead(answer.statusCode ?? 502, answer.headers).end(bytes);
            }),
        );
        forwarded.on('error', () => res.writeHead(502).end());
        forwarded.end(requestBody);
      });
    });
    return listenOnLoopback(this.server);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await closeServer(this.server);
  }
}

function flatten(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).flatMap(([name, value]) => (value === undefined ? [] : [[name, Array.isArray(value) ? value.join(', ') : value]])),
  );
}
