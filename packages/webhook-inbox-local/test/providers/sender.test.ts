/**
 * The rule checked here, stated on its own: a provider treats any 3xx as a failed attempt and
 * never follows it, as real providers do (a delivery ends only with a 2xx). A sender that
 * followed the redirect, as fetch does by default, would count the 200 of the redirect's target
 * as delivered.
 */
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { Random } from '../../src/providers/random';
import { RetryingSender } from '../../src/providers/sender';

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

test.each([301, 302, 303, 307, 308])('a %i is a failed attempt, retried on schedule and never followed; the delivery ends dead', async (status) => {
  let followed = 0;
  let attempted = 0;
  const target = await serve((req, res) => {
    followed++;
    req.resume();
    res.writeHead(200).end('{"result":"accepted"}');
  });
  const endpoint = await serve((req, res) => {
    attempted++;
    req.resume();
    res.writeHead(status, { location: `${target.url}/hooks/answerline` }).end();
  });
  const sender = new RetryingSender({
    provider: 'answerline',
    url: `${endpoint.url}/hooks/answerline`,
    schedule: { maxAttempts: 3, waitBeforeMs: () => 1, timeoutMs: 10_000 },
    random: new Random(1),
  });
  try {
    const record = sender.newDelivery({ id: 'msg_1', eventKey: 'answerline#tsk_1', kind: 'result', body: Buffer.from('{}') });
    await sender.deliver(record, () => ({ headers: { 'content-type': 'application/json' }, body: record.body }));

    expect(record.state).toBe('dead');
    expect(record.attempts.map((attempt) => attempt.status)).toEqual([status, status, status]);
    expect(attempted).toBe(3);
    expect(followed).toBe(0);
    expect(sender.stats).toMatchObject({ attempts: 3, delivered: 0, dead: 1 });
  } finally {
    sender.close();
    await close(endpoint.server);
    await close(target.server);
  }
});
