/**
 * Filters at the edge, as the construct synthesizes them: a provider's `eventTypes` and
 * `keepWhen` reach the verifier's configuration as given (nothing when neither is set), and a
 * filter that cannot work is refused at synth, naming the provider and the prop.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { DeliveryPredicate, WebhookInbox, WebhookInboxProps, WebhookProvider } from '../../lib';
import { Env } from '../../lib/contract';
import { handlerSettings } from '../support/handler-settings';

function verifierProviders(props: WebhookInboxProps): any[] {
  const stack = new Stack(new App(), 'Test', { env: { account: '111111111111', region: 'eu-west-1' } });
  new WebhookInbox(stack, 'Inbox', props);
  Template.fromStack(stack);
  const joined = handlerSettings(stack, 'InboxVerifier')[Env.PROVIDERS]['Fn::Join'][1];
  return JSON.parse(joined.map((part: unknown) => (typeof part === 'string' ? part : '<token>')).join(''));
}

const build = (props: WebhookInboxProps) => () => verifierProviders(props);

describe('eventTypes and keepWhen', () => {
  test('reach the verifier as given; a provider without either has no filter', () => {
    const providers = verifierProviders({
      providers: [
        WebhookProvider.stripe({ eventTypes: ['payment_intent.succeeded', 'charge.refunded'] }),
        WebhookProvider.github({
          keepWhen: DeliveryPredicate.allOf(
            DeliveryPredicate.valueIn('repository.full_name', ['acme/api']),
            DeliveryPredicate.not(DeliveryPredicate.startsWith('sender.login', 'dependabot')),
            DeliveryPredicate.anyOf(DeliveryPredicate.present('pull_request'), DeliveryPredicate.valueIn('ref', ['refs/heads/main'])),
          ),
        }),
        WebhookProvider.slack(),
      ],
    });
    expect(providers.map((provider) => provider.filter)).toEqual([
      { eventTypes: ['payment_intent.succeeded', 'charge.refunded'] },
      {
        predicate: {
          op: 'all',
          rules: [
            { op: 'in', path: 'repository.full_name', values: ['acme/api'] },
            { op: 'not', rule: { op: 'prefix', path: 'sender.login', prefix: 'dependabot' } },
            {
              op: 'any',
              rules: [
                { op: 'present', path: 'pull_request' },
                { op: 'in', path: 'ref', values: ['refs/heads/main'] },
              ],
            },
          ],
        },
      },
      undefined,
    ]);
  });

  test('eventTypes of a provider whose deliveries name no type (Twilio, a generic HMAC sender) is refused, pointing at keepWhen', () => {
    expect(
      build({
        providers: [
          WebhookProvider.twilio({ webhookUrl: 'https://hooks.example.com/hooks/twilio', eventTypes: ['sms'] }),
          WebhookProvider.hmac({ name: 'acme', signatureHeader: 'x-sig', idJsonPath: 'id', eventTypes: ['order.created'] }),
        ],
      }),
    ).toThrow(
      /providers: twilio: eventTypes: Twilio deliveries name no event type; filter them with a predicate[\s\S]*providers: acme: eventTypes: .* name no event type/,
    );
  });

  test('an empty list, a type that is not a name and a path that is not a dotted path are refused, each named', () => {
    expect(build({ providers: [WebhookProvider.stripe({ eventTypes: [] })] })).toThrow(/providers: stripe: eventTypes must list from 1 to 100 event types/);
    expect(build({ providers: [WebhookProvider.github({ eventTypes: ['push', 'pull request'] })] })).toThrow(
      /providers: github: eventTypes\[1\] "pull request" is not an event type name/,
    );
    expect(build({ providers: [WebhookProvider.stripe({ keepWhen: DeliveryPredicate.not(DeliveryPredicate.valueIn('data..livemode', ['true'])) })] })).toThrow(
      /providers: stripe: keepWhen\.not\.path "data\.\.livemode" is not a dotted path/,
    );
    expect(build({ providers: [WebhookProvider.stripe({ keepWhen: DeliveryPredicate.valueIn('livemode', []) })] })).toThrow(
      /providers: stripe: keepWhen\.values must list at least one string/,
    );
    expect(build({ providers: [WebhookProvider.stripe({ keepWhen: DeliveryPredicate.anyOf() })] })).toThrow(
      /providers: stripe: keepWhen\.any must combine at least one condition/,
    );
  });
});
