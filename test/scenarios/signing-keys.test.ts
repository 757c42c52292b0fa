/**
 * What a stored signing secret must be to sign anything: a zero-length HMAC key is no key. The
 * text-secret presets (GitHub, Stripe, Echonova, a generic HMAC scheme with a text secret) sign
 * with the secret's bytes, so an empty stored value would make every request signed with an empty
 * key authentic. The signatures here are computed with node:crypto over an empty key.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { AdapterKind, MetricName, ProviderRuntimeConfig } from '../../lib/contract';
import { hmacRuntimeSettings } from '../../lib/private/provider-runtime';
import { answerOf, apiGatewayEvent, InboxHarness, SecretsFixture } from '../support/inbox-fixture';
import { HeaderMap, textSecret } from '../support/senders';

const EMPTY_KEY = '';
const hexMac = (content: string, key = EMPTY_KEY) => createHmac('sha256', key).update(content).digest('hex');

interface TextPreset {
  readonly adapter: string;
  readonly config?: Partial<ProviderRuntimeConfig>;
  readonly body: () => string;
  /** The headers of `body` signed with `key` at `timestamp`. */
  readonly sign: (body: string, key: string, timestamp: number) => HeaderMap;
}

const PRESETS: Record<string, TextPreset> = {
  github: {
    adapter: AdapterKind.GITHUB,
    body: () => JSON.stringify({ action: 'opened', issue: { number: 1, node_id: randomUUID() } }),
    sign: (body, key) => ({ 'x-github-event': 'issues', 'x-github-delivery': randomUUID(), 'x-hub-signature-256': `sha256=${hexMac(body, key)}` }),
  },
  stripe: {
    adapter: AdapterKind.STRIPE,
    body: () => JSON.stringify({ id: `evt_${randomUUID()}`, object: 'event', type: 'charge.succeeded' }),
    sign: (body, key, timestamp) => ({ 'stripe-signature': `t=${timestamp},v1=${hexMac(`${timestamp}.${body}`, key)}` }),
  },
  echonova: {
    adapter: AdapterKind.ECHONOVA,
    body: () => JSON.stringify({ voiceId: `voice_${randomUUID()}`, name: 'Narrator' }),
    sign: (body, key, timestamp) => ({
      'x-webhook-event': 'voice.created',
      'x-webhook-timestamp': String(timestamp),
      'x-webhook-signature': hexMac(`${timestamp}.${body}`, key),
    }),
  },
  'text-hmac': {
    adapter: AdapterKind.HMAC,
    config: { hmac: hmacRuntimeSettings({ signatureHeader: 'X-Signature', idJsonPath: 'id' }) },
    body: () => JSON.stringify({ id: `evt_${randomUUID()}` }),
    sign: (body, key) => ({ 'x-signature': hexMac(body, key) }),
  },
};

const secrets = new SecretsFixture();
let h: InboxHarness;

beforeAll(() => secrets.start());
afterAll(() => secrets.stop());
beforeEach(async () => {
  h = await InboxHarness.create(secrets, 'signing-keys');
});
afterEach(() => {
  h.expectLogsClean();
  h.destroy();
});

async function post(name: string, config: ProviderRuntimeConfig, key: string) {
  const preset = PRESETS[name];
  const body = preset.body();
  const headers = preset.sign(body, key, h.clock.seconds);
  h.markSensitive(body, ...Object.values(headers).filter((value) => value.length >= 40));
  return answerOf(await h.verifier({ providers: [config] })(apiGatewayEvent(body, headers, { path: `/hooks/${name}` })));
}

describe.each(Object.keys(PRESETS))('%s', (name) => {
  const preset = PRESETS[name];

  test('an empty AWSCURRENT is no key: a request signed with a zero-length key is answered 503 secret_unavailable, nothing stored', async () => {
    const config = await h.addProvider(name, preset.adapter, EMPTY_KEY, preset.config);

    expect(await post(name, config, EMPTY_KEY)).toEqual({ statusCode: 503, result: 'secret_unavailable' });
    await h.expectNothingAdmitted();
    expect(h.capture.metric(MetricName.SECRET_UNAVAILABLE, name)).toBe(1);
  });

  test('an empty AWSPENDING is skipped: the empty-key signature is a bad signature, counted as an unusable staged version; AWSCURRENT still verifies', async () => {
    const secret = textSecret();
    const config = await h.addProvider(name, preset.adapter, secret, preset.config);
    await secrets.stagePending(config.secretId!, EMPTY_KEY);

    expect(await post(name, config, EMPTY_KEY)).toMatchObject({ statusCode: 400, result: 'bad_signature' });
    expect(h.capture.metric(MetricName.UNUSABLE_SECRET_VERSION, name)).toBe(1);
    await h.expectNothingAdmitted();
    expect(await post(name, config, secret)).toEqual({ statusCode: 202, result: 'accepted' });
  });
});
