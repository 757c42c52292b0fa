/**
 * The twin's console: one self-contained page (inline CSS and script, charts as inline SVG,
 * nothing fetched from anywhere but the twin) that polls the twin's snapshot every second and
 * shows first what the inboxes received (per inbox and provider the recent deliveries, the rows by
 * status, the dead-letter queue), then the alarms, one line each by the names the README and the
 * runbook use (`deadDeliveries`), with a reason only for those in ALARM, then the dashboards. No
 * word is ever broken across lines: what does not fit is cut short with an ellipsis, its whole text
 * in its tooltip. The listener mounts on the twin's loopback HTTP server.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CONTENT_SECURITY_POLICY, PAGE } from './page';
import type { ConsoleSource } from './snapshot';

export const CONSOLE_PATH = '/console';
export const SNAPSHOT_PATH = '/console/api/snapshot';
/** `POST` with `{"inbox": <name>, "action": "pause" | "resume"}`: the console's flow-control buttons. */
export const FLOW_PATH = '/console/api/flow';

/**
 * Handles `GET /console` (the page) and `GET /console/api/snapshot` (the snapshot as JSON) and
 * returns true; returns false, having touched nothing, for any other path.
 */
export function consoleRequestListener(source: ConsoleSource): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path !== CONSOLE_PATH && path !== `${CONSOLE_PATH}/` && path !== SNAPSHOT_PATH && path !== FLOW_PATH) return false;
    // A page elsewhere could reach the loopback port through a name it rebinds to 127.0.0.1: the
    // Host header still carries that name.
    if (!isLoopbackHost(req.headers.host)) {
      answer(res, 403, 'application/json; charset=utf-8', JSON.stringify({ message: 'the console answers only on a loopback host name' }));
    } else if (path === FLOW_PATH && req.method === 'POST') {
      void changeFlow(source, req, res);
    } else if (req.method !== 'GET' || path === FLOW_PATH) {
      answer(res, 405, 'application/json; charset=utf-8', JSON.stringify({ message: 'Method Not Allowed' }), { allow: 'GET' });
    } else if (path === SNAPSHOT_PATH) {
      void sendSnapshot(source, res);
    } else {
      answer(res, 200, 'text/html; charset=utf-8', PAGE, { 'content-security-policy': CONTENT_SECURITY_POLICY, 'referrer-policy': 'no-referrer' });
    }
    return true;
  };
}

/**
 * A flow-control button: only a JSON body naming an inbox and an action, which a page of another
 * origin cannot send without a preflight the console never answers (it asks for JSON).
 */
async function changeFlow(source: ConsoleSource, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const json = 'application/json; charset=utf-8';
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  let request: { inbox?: unknown; action?: unknown };
  try {
    if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) throw new Error('not JSON');
    request = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof request;
  } catch {
    return answer(res, 415, json, JSON.stringify({ message: 'send {"inbox": <name>, "action": "pause" | "resume"} as application/json' }));
  }
  if (typeof request?.inbox !== 'string' || (request.action !== 'pause' && request.action !== 'resume')) {
    return answer(res, 400, json, JSON.stringify({ message: 'inbox: a name, and action: "pause" or "resume", are required' }));
  }
  if (!source.changeFlow) return answer(res, 404, json, JSON.stringify({ message: 'this console has no flow control' }));
  try {
    await source.changeFlow(request.inbox, request.action);
  } catch (error) {
    return answer(res, 500, json, JSON.stringify({ message: `${request.action} failed: ${(error as Error).message}` }));
  }
  answer(res, 200, json, JSON.stringify({ inbox: request.inbox, action: request.action }));
}

async function sendSnapshot(source: ConsoleSource, res: ServerResponse): Promise<void> {
  let body: string;
  try {
    body = JSON.stringify(await source.snapshot());
  } catch (error) {
    return answer(res, 500, 'application/json; charset=utf-8', JSON.stringify({ message: `snapshot failed: ${(error as Error).message}` }));
  }
  answer(res, 200, 'application/json; charset=utf-8', body);
}

function answer(res: ServerResponse, status: number, contentType: string, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, {
    'content-type': contentType,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...headers,
  });
  res.end(body);
}

function isLoopbackHost(host: string | undefined): boolean {
  return host !== undefined && /^(localhost|127(\.\d{1,3}){3}|\[::1\])(:\d+)?$/i.test(host);
}
