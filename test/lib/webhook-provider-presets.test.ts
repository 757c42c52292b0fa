/**
 * What the Shopify, Paddle, PagerDuty and Linear presets resolve to, restated by hand: their
 * adapter, their name and path, the kind of secret, and the tolerances each provider's own rules
 * call for by default (Paddle's SDK accepts 5 s, Linear recommends a minute), which options override;
 * that every adapter kind has its static factory; and which secrets rotation refuses.
 */
import { App, Duration, Stack } from 'aws-cdk-lib';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { WebhookInbox, WebhookProvider, WebhookProviderConfig, WebhookProviderOptions } from '../../lib';
import { AdapterKind } from '../../lib/contract';
import { providerRuntimeConfigOf } from '../../lib/private/provider-runtime';

const bind = (provider: WebhookProvider) => provider.bind(new Stack(new App(), 'Presets'));
const tolerances = (provider: WebhookProvider) => {
  const config = bind(provider);
  return [config.pastTolerance.toSeconds(), config.futureTolerance.toSeconds()];
};

describe.each([
  ['shopify', (options?: WebhookProviderOptions) => WebhookProvider.shopify(options), [300, 300]],
  ['paddle', (options?: WebhookProviderOptions) => WebhookProvider.paddle(options), [5, 300]],
  ['pagerduty', (options?: WebhookProviderOptions) => WebhookProvider.pagerduty(options), [300, 300]],
  ['linear', (options?: WebhookProviderOptions) => WebhookProvider.linear(options), [60, 60]],
])('WebhookProvider.%s()', (name, preset, defaults) => {
  test(`is served at /hooks/${name} by the ${name} adapter with a text secret`, () => {
    expect(bind(preset())).toMatchObject({ name, adapter: name, secretFormat: 'text' });
    expect(bind(preset({ name: `${name}-eu` })).name).toBe(`${name}-eu`);
  });

  test(`tolerates ${defaults[0]} s past and ${defaults[1]} s future by default; each option overrides its own`, () => {
    expect(tolerances(preset())).toEqual(defaults);
    expect(tolerances(preset({ pastTolerance: Duration.seconds(30) }))).toEqual([30, defaults[1]]);
    expect(tolerances(preset({ futureTolerance: Duration.seconds(20) }))).toEqual([defaults[0], 20]);
    expect(providerRuntimeConfigOf(bind(preset()), 'arn:secret')).toMatchObject({ tolerancePastSeconds: defaults[0], toleranceFutureSeconds: defaults[1] });
  });
});

test('the Standard Webhooks preset serves senders by name: OpenAI, Clerk and Resend', () => {
  for (const name of ['openai', 'clerk', 'resend']) {
    expect(bind(WebhookProvider.standardWebhooks({ name }))).toMatchObject({ name, adapter: 'standard-webhooks', secretFormat: 'whsec' });
  }
});

test('every adapter kind the runtime serves has a static factory that binds to it', () => {
  const stack = new Stack(new App(), 'Factories');
  const apiKeySecret = secretsmanager.Secret.fromSecretNameV2(stack, 'ApiKey', 'api-key');
  const presets = [
    WebhookProvider.answerline(),
    WebhookProvider.echonova(),
    WebhookProvider.standardWebhooks(),
    WebhookProvider.stripe(),
    WebhookProvider.github(),
    WebhookProvider.meta(),
    WebhookProvider.slack(),
    WebhookProvider.zoom(),
    WebhookProvider.shopify(),
    WebhookProvider.paddle(),
    WebhookProvider.pagerduty(),
    WebhookProvider.linear(),
    WebhookProvider.discord(),
    WebhookProvider.square({ notificationUrl: 'https://hooks.example.com/hooks/square' }),
    WebhookProvider.twilio({ webhookUrl: 'https://hooks.example.com/hooks/twilio' }),
    WebhookProvider.sns({ topicArns: ['arn:aws:sns:us-east-1:123456789012:orders'] }),
    WebhookProvider.messageBatches({ apiKeySecret }),
    WebhookProvider.hmac({ signatureHeader: 'X-Signature', idJsonPath: 'id' }),
  ];
  expect(presets.map((preset) => preset.bind(stack).adapter).sort()).toEqual(Object.values(AdapterKind).sort());
});

test('a provider of your own whose secret the rotation function does not make is refused rotation at synth, naming the formats it makes', () => {
  class PemProvider extends WebhookProvider {
    public bind(scope: Construct): WebhookProviderConfig {
      return { ...WebhookProvider.stripe({ rotation: {} }).bind(scope), name: 'pem', secretFormat: 'pem' };
    }
  }
  const stack = new Stack(new App(), 'Pem');
  expect(() => new WebhookInbox(stack, 'Inbox', { providers: [new PemProvider()] })).toThrow(
    /providers: pem: rotation: a pem secret is not rotated: the rotation function makes whsec and text secrets/,
  );
});
