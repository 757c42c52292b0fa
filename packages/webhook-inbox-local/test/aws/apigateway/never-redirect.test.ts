/**
 * The rule checked here, stated on its own: the endpoint never answers 3xx. A redirect makes a
 * provider fail silently (providers do not follow one, and count it as a failed attempt), so
 * through the front door every path a provider could mistype (unknown paths, trailing or doubled
 * slashes, another case), every method on a POST route (HEAD, GET, PUT, ...) and every
 * forwarding header an http-to-https rule would react to (X-Forwarded-Proto: http, Forwarded)
 * gets a 2xx, 4xx or 5xx, never a 3xx and never a Location header. Requests are sent with
 * node:http, which never follows a redirect, so a 3xx would be seen as it was answered. A
 * trailing slash may reach the verifier (whether API Gateway matches it to the route is not the
 * stand-in's to decide): the verifier accepts it as the path without it.
 * Checked on the API Gateway stand-in with the real verifier on the emulators, and on the local
 * twin running a synthesized template.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { WebhookInbox, WebhookProvider } from '../../../../../lib';
import { startApiGateway } from '../../../src/aws/apigateway/http-api';
import { standardWebhooksHeaders, unixSeconds } from '../../../src/providers/signing';
import { ASSEMBLY_METADATA_CONTEXT } from '../../../src/twin/synth';
import { answerlineBody, apiGatewayEvent, InboxHarness, PROVIDER, SecretsFixture } from '../../../../../test/support/inbox-fixture';
import { startTemplateTwinProcess } from '../../../../../test/support/template-twin-process';

interface Answer {
  readonly status: number;
  readonly location?: string;
}

/** One request, never following a redirect. */
function send(base: string, method: string, path: string, headers: Record<string, string> = {}, body = ''): Promise<Answer> {
  const payload = method === 'GET' || method === 'HEAD' ? '' : body;
  // An explicit length: node:http sends DELETE and OPTIONS bodies unframed otherwise.
  const framing = payload === '' ? {} : { 'content-length': String(Buffer.byteLength(payload)) };
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method, headers: { 'content-type': 'application/json', ...framing, ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, location: res.headers.location }));
    });
    req.on('error', reject).end(payload === '' ? undefined : payload);
  });
}

/** Paths a provider could be registered at by mistake, beside the served `/hooks/<name>`. */
function strayPaths(name: string): string[] {
  return [
    `/hooks/${name}/`,
    `/hooks/${name}//`,
    `//hooks/${name}`,
    `/hooks//${name}`,
    `/HOOKS/${name}`,
    `/hooks/${name.toUpperCase()}`,
    `/hooks/${name}/extra`,
    `/hooks/${name}.json`,
    '/hooks/',
    '/hooks',
    '/',
    '/index.html',
    `/hooks/not-${name}`,
    `/${name}`,
    '/prod/hooks/' + name,
  ];
}

const OTHER_METHODS = ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** What an http-to-https or canonical-host rule would redirect on. */
const FORWARDING_HEADERS: Record<string, string>[] = [
  { 'x-forwarded-proto': 'http' },
  { 'x-forwarded-proto': 'https' },
  { 'x-forwarded-proto': 'http', 'x-forwarded-port': '80' },
  { forwarded: 'for=203.0.113.7;proto=http' },
  { 'x-forwarded-host': 'www.example.com', 'x-forwarded-proto': 'http' },
  { 'x-forwarded-ssl': 'off', 'front-end-https': 'off' },
];

/** Every answer below 300 or at least 400, and none with a Location header; returns the statuses by request. */
async function probe(base: string, name: string, signed: () => { headers: Record<string, string>; body: string }): Promise<Record<string, number>> {
  const answers: Record<string, Answer> = {};
  for (const path of strayPaths(name)) {
    answers[`POST ${path}`] = await send(base, 'POST', path, {}, '{}');
    answers[`GET ${path}`] = await send(base, 'GET', path);
  }
  for (const method of OTHER_METHODS) answers[`${method} /hooks/${name}`] = await send(base, method, `/hooks/${name}`, {}, '{}');
  for (const headers of FORWARDING_HEADERS) {
    const delivery = signed();
    answers[`POST /hooks/${name} signed ${JSON.stringify(headers)}`] = await send(
      base,
      'POST',
      `/hooks/${name}`,
      { ...delivery.headers, ...headers },
      delivery.body,
    );
    answers[`POST /hooks/${name}/ signed ${JSON.stringify(headers)}`] = await send(
      base,
      'POST',
      `/hooks/${name}/`,
      { ...delivery.headers, ...headers },
      delivery.body,
    );
    answers[`POST /hooks/${name} unsigned ${JSON.stringify(headers)}`] = await send(base, 'POST', `/hooks/${name}`, headers, '{}');
  }
  const redirects = Object.entries(answers).filter(([, answer]) => (answer.status >= 300 && answer.status < 400) || answer.location !== undefined);
  expect(redirects).toEqual([]);
  return Object.fromEntries(Object.entries(answers).map(([what, answer]) => [what, answer.status]));
}

describe('the API Gateway stand-in with the verifier behind it', () => {
  const secrets = new SecretsFixture();
  let h: InboxHarness;

  beforeAll(async () => {
    await secrets.start();
    h = await InboxHarness.create(secrets, 'never-redirect');
  });
  afterAll(async () => {
    h.destroy();
    await secrets.stop();
  });

  test('the verifier reads a trailing slash as the path without it: a signed delivery there is accepted, not sent elsewhere', async () => {
    const body = answerlineBody();
    const event = apiGatewayEvent(body, standardWebhooksHeaders(h.secret.value, `msg_${randomUUID()}`, h.clock.seconds, Buffer.from(body)), {
      path: `/hooks/${PROVIDER}/`,
    });
    const answer = await h.verifier()(event);

    expect(answer.statusCode).toBe(202);
    expect(answer.headers).not.toHaveProperty('location');
  });

  test('answers no request with a 3xx: stray paths and other methods 404, signed deliveries 202 whatever the forwarding headers', async () => {
    const verifier = h.verifier();
    const api = await startApiGateway({ routes: [{ routeKey: `POST /hooks/${PROVIDER}`, invoke: (event) => verifier(event) }] });
    try {
      const statuses = await probe(api.url, PROVIDER, () => {
        const body = answerlineBody();
        return { body, headers: standardWebhooksHeaders(h.secret.value, `msg_${randomUUID()}`, h.clock.seconds, Buffer.from(body)) };
      });
      for (const [what, status] of Object.entries(statuses)) {
        if (what.startsWith(`POST /hooks/${PROVIDER} signed`)) expect([what, status]).toEqual([what, 202]);
        else if (what.startsWith(`POST /hooks/${PROVIDER} unsigned`)) expect([what, status]).toEqual([what, 400]);
        else expect([what, status]).toEqual([what, 404]);
      }
    } finally {
      await api.stop();
    }
  });
});

describe('the twin running a synthesized template', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'never-redirect-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('answers no request with a 3xx, a provider with a GET route (Meta) included', async () => {
    const outdir = join(dir, 'cdk.out');
    const app = new App({ outdir, context: { 'aws:cdk:disable-asset-staging': true, ...ASSEMBLY_METADATA_CONTEXT } });
    new WebhookInbox(new Stack(app, 'Redirects'), 'Inbox', { providers: [WebhookProvider.answerline(), WebhookProvider.meta()] });
    app.synth();
    const twin = await startTemplateTwinProcess({ app: outdir, port: 0, stateDir: join(dir, 'state') });
    try {
      const [inbox] = twin.ready.inboxes;
      const answerline = inbox.providers.find((provider) => provider.name === 'answerline')!;
      const base = new URL(answerline.url).origin;
      const statuses = await probe(base, 'answerline', () => {
        const body = answerlineBody();
        return { body, headers: standardWebhooksHeaders(answerline.secret, `msg_${randomUUID()}`, unixSeconds(), Buffer.from(body)) };
      });
      expect(statuses[`POST /hooks/answerline signed ${JSON.stringify(FORWARDING_HEADERS[0])}`]).toBe(202);
      expect(statuses['GET /hooks/answerline']).toBe(404);
      expect(statuses['POST /hooks/answerline/']).toBe(404);
      // Meta's GET check is a route: a wrong verify token is refused 403, never sent elsewhere.
      const check = await send(base, 'GET', '/hooks/meta?hub.mode=subscribe&hub.verify_token=wrong&hub.challenge=1');
      expect(check).toEqual({ status: 403 });
      expect((await send(base, 'HEAD', '/hooks/meta')).status).toBe(404);
      expect((await send(base, 'GET', '/hooks/meta/')).status).toBe(404);
    } finally {
      await twin.stop();
    }
  });
});
