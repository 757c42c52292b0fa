/**
 * A STAND-IN for the Lambda Invoke API, for the tests and the local twin only (no emulator of it
 * exists on npm or Debian): a node:http server on 127.0.0.1 that speaks the REST protocol the
 * real LambdaClient uses (`POST /2015-03-31/functions/{name}/invocations`), so the SDK runs
 * unchanged. Functions are in-process handlers; a handler that
 * throws answers as Lambda answers a function error: 200 with `X-Amz-Function-Error: Unhandled`
 * and the error document as the payload. An unknown function is a 404 ResourceNotFoundException.
 */
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { closeServer, listenOnLoopback } from '../loopback';

export type FunctionHandler = (payload: unknown) => Promise<unknown> | unknown;

export interface Invocation {
  readonly functionName: string;
  readonly invocationType: string;
  readonly payload: unknown;
}

const INVOKE_PATH = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;

export class LambdaInvokeStandIn {
  private readonly functions = new Map<string, FunctionHandler>();
  readonly invocations: Invocation[] = [];
  private server?: Server;

  /** Starts serving on 127.0.0.1 and returns the endpoint URL. */
  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.serve(req, res));
    return listenOnLoopback(this.server);
  }

  async stop(): Promise<void> {
    await closeServer(this.server);
  }

  /** Deploys (or replaces) the function named by `functionName` (an ARN or a name). */
  deploy(functionName: string, handler: FunctionHandler): void {
    this.functions.set(functionName, handler);
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const match = INVOKE_PATH.exec(new URL(req.url ?? '/', 'http://localhost').pathname);
    const functionName = match ? decodeURIComponent(match[1]) : '';
    const handler = this.functions.get(functionName);
    if (req.method !== 'POST' || !handler) {
      res
        .writeHead(404, { 'content-type': 'application/json', 'x-amzn-errortype': 'ResourceNotFoundException' })
        .end(JSON.stringify({ Type: 'User', message: `Function not found: ${functionName}` }));
      return;
    }
    const text = Buffer.concat(chunks).toString('utf8');
    const payload: unknown = text === '' ? {} : JSON.parse(text);
    const invocationType = String(req.headers['x-amz-invocation-type'] ?? 'RequestResponse');
    this.invocations.push({ functionName, invocationType, payload });
    const headers = { 'content-type': 'application/json', 'x-amz-executed-version': '$LATEST' };
    try {
      const result = await handler(payload);
      res.writeHead(200, headers).end(JSON.stringify(result ?? null));
    } catch (error) {
      const { name, message, trace } = error as Error & { trace?: readonly string[] };
      res
        .writeHead(200, { ...headers, 'x-amz-function-error': 'Unhandled' })
        .end(JSON.stringify({ errorType: name ?? 'Error', errorMessage: message ?? '', trace: trace ?? [] }));
    }
  }
}
