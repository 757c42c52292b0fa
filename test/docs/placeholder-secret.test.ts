/**
 * What docs/DEPLOY.md tells an operator a provider sees between `cdk deploy` and storing the
 * provider's secret: the deployed secret holds a generated placeholder, so every delivery the
 * provider signs with its real secret is refused 400 `bad_signature` (a test delivery too: the
 * signature is checked first), nothing is stored or enqueued, and the first delivery after the
 * secret is stored verifies without waiting for the cache's TTL.
 *
 * The placeholder is generated from the synthesized template's own `GenerateSecretString`, as
 * Secrets Manager generates it at deploy time.
 */
import { randomUUID } from 'node:crypto';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { WebhookInbox, WebhookProvider } from '../../lib';
import { AdapterKind, ProviderRuntimeConfig } from '../../lib/contract';
import { templateSecretValue } from '#twin/testing';
import { answerlineBody, answerOf, apiGatewayEvent, InboxHarness, newSigningSecret, SecretsFixture } from '../support/inbox-fixture';
import { echonovaHeaders, standardWebhooksHeaders, textSecret } from '../support/senders';

/** The deployed placeholder of each provider's signing secret, by provider name. */
function deployedPlaceholders(): Record<string, string> {
  const stack = new Stack(new App(), 'Answers');
  new WebhookInbox(stack, 'Inbox', { providers: [WebhookProvider.answerline(), WebhookProvider.echonova()] });
  const secrets = Template.fromStack(stack).findResources('AWS::SecretsManager::Secret');
  const of = (name: string) => {
    const [properties] = Object.entries(secrets)
      .filter(([logicalId]) => logicalId.startsWith(`Inbox${name}SigningSecret`))
      .map(([, resource]) => resource.Properties as Record<string, unknown>);
    // A generated value, never one written into the template.
    expect(properties.SecretString).toBeUndefined();
    return templateSecretValue(properties);
  };
  return { answerline: of('Answerline'), echonova: of('Echonova') };
}

const secrets = new SecretsFixture();
let h: InboxHarness;
let placeholders: Record<string, string>;

beforeAll(async () => {
  placeholders = deployedPlaceholders();
  await secrets.start();
});
afterAll(() => secrets.stop());
beforeEach(async () => {
  h = await InboxHarness.create(secrets, 'placeholder');
});
afterEach(() => {
  h.expectLogsClean();
  h.destroy();
});

/** The two providers of the guide: each one's real secret (what it signs with) and how it signs. */
const PROVIDERS = {
  answerline: {
    adapter: AdapterKind.ANSWERLINE,
    realSecret: newSigningSecret,
    body: () => answerlineBody(),
    sign: (body: string, secret: string, now: number) => standardWebhooksHeaders(body, secret, now),
    signatureHeader: 'webhook-signature',
  },
  echonova: {
    adapter: AdapterKind.ECHONOVA,
    realSecret: textSecret,
    body: () => JSON.stringify({ jobId: `job_${randomUUID()}`, status: 'completed', createdAt: '2026-09-18T10:00:00.000Z' }),
    sign: (body: string, secret: string, now: number) => echonovaHeaders(body, secret, now, 'job.completed'),
    signatureHeader: 'x-webhook-signature',
  },
} as const;

describe.each(['answerline', 'echonova'] as const)('%s, before and after its secret is stored', (name) => {
  const provider = PROVIDERS[name];
  let config: ProviderRuntimeConfig;
  let realSecret: string;

  beforeEach(async () => {
    config = await h.addProvider(name, provider.adapter, placeholders[name]);
    realSecret = provider.realSecret();
    h.markSensitive(realSecret);
  });

  async function post(verifier: ReturnType<InboxHarness['verifier']>, body: string) {
    const headers = provider.sign(body, realSecret, h.clock.seconds);
    h.markSensitive(body, headers[provider.signatureHeader]);
    return answerOf(await verifier(apiGatewayEvent(body, headers, { path: `/hooks/${name}` })));
  }

  test('with the placeholder every delivery is 400 bad_signature naming the signature header, and nothing is stored', async () => {
    const verifier = h.verifier({ providers: [config] });

    expect(await post(verifier, provider.body())).toEqual({
      statusCode: 400,
      result: 'bad_signature',
      detail: expect.stringContaining(provider.signatureHeader),
    });
    await h.expectNothingAdmitted();
  });

  test('the delivery after the provider secret is stored is accepted at once, not after the cache TTL', async () => {
    const verifier = h.verifier({ providers: [config] });
    const body = provider.body();
    expect((await post(verifier, body)).statusCode).toBe(400);

    await secrets.rotate(config.secretId!, realSecret);
    // The provider's retry comes later than the 2 s between forced re-reads; far sooner than the 5-minute TTL.
    h.clock.advance(5_000);

    expect(await post(verifier, body)).toEqual({ statusCode: 202, result: 'accepted' });
    expect(await h.inboxItems()).toHaveLength(1);
  });
});

test('a test delivery signed with the real secret is a bad signature too, never a test, while the placeholder is stored', async () => {
  const config = await h.addProvider('answerline', AdapterKind.ANSWERLINE, placeholders.answerline);
  const realSecret = newSigningSecret();
  h.markSensitive(realSecret);
  const body = JSON.stringify({ ...JSON.parse(answerlineBody()), test: true });
  const headers = standardWebhooksHeaders(body, realSecret, h.clock.seconds);
  h.markSensitive(body, headers['webhook-signature']);

  const answer = answerOf(await h.verifier({ providers: [config] })(apiGatewayEvent(body, headers, { path: '/hooks/answerline' })));

  expect(answer).toMatchObject({ statusCode: 400, result: 'bad_signature' });
  await h.expectNothingAdmitted();
});
