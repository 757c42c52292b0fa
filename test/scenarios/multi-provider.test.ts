/**
 * One inbox serving several providers (docs/DESIGN.md#providers): each at `/hooks/<name>` with its
 * own secret in Secrets Manager (the stand-in), keys namespaced by provider, metrics and logs
 * per provider. Deliveries are signed by the providers' own libraries or, for Echonova,
 * independently with node:crypto.
 */
import { randomUUID } from 'node:crypto';
import { AdapterKind, MetricName, ProviderRuntimeConfig } from '../../lib/contract';
import {
  answerlineBody,
  answerOf,
  apiGatewayEvent,
  eventIdOf,
  InboxHarness,
  newSigningSecret,
  providerOf,
  SecretsFixture,
  sha256Hex,
} from '../support/inbox-fixture';
import { echonovaHeaders, HeaderMap, standardWebhooksHeaders, stripeHeaders, stripeSecret, textSecret } from '../support/senders';

type Name = 'answerline' | 'echonova' | 'stripe';
const NAMES: readonly Name[] = ['answerline', 'echonova', 'stripe'];

/** Each provider's body for an event id, and the headers it signs them with. */
const PROVIDERS: Record<
  Name,
  { adapter: string; newSecret: () => string; body: (id: string) => string; sign: (body: string, secret: string, timestamp: number) => HeaderMap }
> = {
  answerline: {
    adapter: AdapterKind.ANSWERLINE,
    newSecret: newSigningSecret,
    body: (id) => answerlineBody({ id }),
    sign: (body, secret, timestamp) => standardWebhooksHeaders(body, secret, timestamp),
  },
  echonova: {
    adapter: AdapterKind.ECHONOVA,
    newSecret: textSecret,
    body: (id) => JSON.stringify({ jobId: id, status: 'completed', createdAt: '2026-09-18T10:00:00.000Z', transcript: `transcript-${randomUUID()}` }),
    sign: (body, secret, timestamp) => echonovaHeaders(body, secret, timestamp, 'job.completed'),
  },
  stripe: {
    adapter: AdapterKind.STRIPE,
    newSecret: stripeSecret,
    body: (id) => JSON.stringify({ id, object: 'event', type: 'charge.succeeded', data: { object: { id: `ch_${randomUUID()}`, amount: 500 } } }),
    sign: (body, secret, timestamp) => stripeHeaders(body, timestamp, secret),
  },
};

/** The event id each adapter derives from an id inside its body. */
const EVENT_ID: Record<Name, (id: string) => string> = {
  answerline: (id) => id,
  // A job's final event: its jobId, escaped, and `:job` (a job finishes once).
  echonova: (id) => `${encodeURIComponent(id)}:job`,
  stripe: (id) => id,
};

const secrets = new SecretsFixture();
let h: InboxHarness;
let configs: ProviderRuntimeConfig[];
let secretOf: Record<Name, string>;
let verifier: ReturnType<InboxHarness['verifier']>;

beforeAll(() => secrets.start());
afterAll(() => secrets.stop());
beforeEach(async () => {
  h = await InboxHarness.create(secrets, 'multi');
  secretOf = { answerline: PROVIDERS.answerline.newSecret(), echonova: PROVIDERS.echonova.newSecret(), stripe: PROVIDERS.stripe.newSecret() };
  configs = await Promise.all(NAMES.map((name) => h.addProvider(name, PROVIDERS[name].adapter, secretOf[name])));
  verifier = h.verifier({ providers: configs });
});
afterEach(() => {
  h.expectLogsClean();
  h.destroy();
});

/** Posts `body`, signed in `format`'s scheme with `secret`, to `/hooks/<path>`. */
async function post(path: string, format: Name, body: string, secret: string) {
  const headers = PROVIDERS[format].sign(body, secret, h.clock.seconds);
  h.markSensitive(body, ...Object.values(headers).filter((value) => value.length > 40));
  return answerOf(await verifier(apiGatewayEvent(body, headers, { path: `/hooks/${path}` })));
}

test('each provider has its own secret in Secrets Manager', () => {
  expect(new Set(configs.map((config) => config.secretId)).size).toBe(3);
  expect(configs.map((config) => [config.name, config.adapter])).toEqual(NAMES.map((name) => [name, PROVIDERS[name].adapter]));
});

describe('each path accepts only its own provider, signed with its own secret', () => {
  const matrix = NAMES.flatMap((path) => NAMES.map((signer) => [path, signer] as const));

  test.each(matrix)("/hooks/%s, in its scheme, signed with %s's secret", async (path, signer) => {
    const body = PROVIDERS[path].body(`id_${randomUUID()}`);

    const answer = await post(path, path, body, secretOf[signer]);

    if (path === signer) {
      expect(answer).toEqual({ statusCode: 202, result: 'accepted' });
      expect(await h.inboxItems()).toHaveLength(1);
    } else {
      expect(answer).toEqual({ statusCode: 400, result: 'bad_signature', detail: expect.any(String) });
      await h.expectNothingAdmitted();
      expect(h.capture.metric(MetricName.BAD_SIGNATURE, path)).toBe(1);
    }
  });

  test.each(NAMES.flatMap((path) => NAMES.filter((format) => format !== path).map((format) => [format, path] as const)))(
    'a genuine %s delivery posted to /hooks/%s is rejected with a 400 and stores nothing',
    async (format, path) => {
      const body = PROVIDERS[format].body(`id_${randomUUID()}`);

      const answer = await post(path, format, body, secretOf[format]);

      expect(answer.statusCode).toBe(400);
      expect(['malformed', 'bad_signature']).toContain(answer.result);
      await h.expectNothingAdmitted();
    },
  );
});

test('keys are namespaced: one id from three providers is three rows, each its own provider', async () => {
  const id = `shared_${randomUUID()}`;
  const bodies = Object.fromEntries(NAMES.map((name) => [name, PROVIDERS[name].body(id)])) as Record<Name, string>;

  for (const name of NAMES) expect(await post(name, name, bodies[name], secretOf[name])).toEqual({ statusCode: 202, result: 'accepted' });
  // A retry to each path is a duplicate of that provider's row only.
  h.clock.advance(5_000);
  for (const name of NAMES) expect(await post(name, name, bodies[name], secretOf[name])).toEqual({ statusCode: 200, result: 'duplicate' });

  const rows = await h.inboxItems();
  expect(rows.map((row) => [row.pk, providerOf(row), eventIdOf(row), row.digest]).sort()).toEqual(
    NAMES.map((name) => [`${name}#${EVENT_ID[name](id)}`, name, EVENT_ID[name](id), sha256Hex(bodies[name])]).sort(),
  );
  expect((await h.takeMessages()).sort()).toEqual(NAMES.map((name) => `${name}#${EVENT_ID[name](id)}`).sort());
  expect(h.capture.metric(MetricName.QUARANTINED)).toBe(0);
});

test('metrics and logs carry the provider name', async () => {
  await post('answerline', 'answerline', PROVIDERS.answerline.body(`tsk_${randomUUID()}`), secretOf.answerline);
  await post('echonova', 'echonova', PROVIDERS.echonova.body(`job_${randomUUID()}`), secretOf.echonova);
  await post('echonova', 'echonova', PROVIDERS.echonova.body(`job_${randomUUID()}`), secretOf.stripe);
  await post('stripe', 'stripe', PROVIDERS.stripe.body(`evt_${randomUUID()}`), secretOf.stripe);
  await post('stripe', 'stripe', PROVIDERS.stripe.body(`evt_${randomUUID()}`), secretOf.stripe);

  expect(NAMES.map((name) => h.capture.metric(MetricName.ACCEPTED, name))).toEqual([1, 1, 2]);
  expect(NAMES.map((name) => h.capture.metric(MetricName.BAD_SIGNATURE, name))).toEqual([0, 1, 0]);
  // The inbox-wide copy of each counter sums the providers.
  expect(h.capture.metric(MetricName.ACCEPTED)).toBe(4);
  expect(h.capture.logs('delivery').map((line) => [line.Provider, line.reason])).toEqual([
    ['answerline', 'accepted'],
    ['echonova', 'accepted'],
    ['echonova', 'bad_signature'],
    ['stripe', 'accepted'],
    ['stripe', 'accepted'],
  ]);
});

test.each(['/hooks/github', '/hooks/Answerline', '/hooks/', '/hooks/stripe/events', '/answerline'])(
  'an unknown path (%s) is answered 404, counted for no provider, and stores nothing',
  async (path) => {
    const body = PROVIDERS.answerline.body(`tsk_${randomUUID()}`);
    const headers = PROVIDERS.answerline.sign(body, secretOf.answerline, h.clock.seconds);
    h.markSensitive(body, headers['webhook-signature']);

    expect(answerOf(await verifier(apiGatewayEvent(body, headers, { path })))).toMatchObject({ statusCode: 404, result: 'unknown_provider' });
    await h.expectNothingAdmitted();
    const logs = h.capture.logs('delivery');
    expect(logs).toEqual([expect.objectContaining({ reason: 'unknown_provider', status: 404 })]);
    // An unserved name is caller input: neither a log field nor a metric dimension takes it.
    expect(logs[0]).not.toHaveProperty('provider');
    expect(h.capture.lines.filter((line) => line.includes('"Provider"'))).toEqual([]);
  },
);
