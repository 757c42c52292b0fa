/**
 * What each provider kind is known to do, from its documentation, one file per provider: how it
 * retries, how long after an event it may still deliver it, how it is polled by default, what its
 * secret looks like. Here: the list of them all, every table and list by kind derived from it, and
 * how a provider's name is spelled.
 */
import { AnswerlineFacts, AnswerlineLifecycle } from './answerline';
import { DiscordFacts } from './discord';
import { EchonovaFacts } from './echonova';
import { ProviderFacts } from './facts';
import { GitHubFacts } from './github';
import { HmacFacts } from './hmac';
import { LinearFacts } from './linear';
import { MessageBatchesFacts } from './message-batches';
import { MetaFacts } from './meta';
import { PaddleFacts } from './paddle';
import { PagerDutyFacts } from './pagerduty';
import { ShopifyFacts } from './shopify';
import { SlackFacts } from './slack';
import { SnsFacts } from './sns';
import { SquareFacts } from './square';
import { StandardWebhooksFacts } from './standard-webhooks';
import { StripeFacts } from './stripe';
import { TwilioFacts } from './twilio';
import { ZoomFacts } from './zoom';

export * from './answerline';
export * from './discord';
export * from './echonova';
export * from './facts';
export * from './github';
export * from './hmac';
export * from './linear';
export * from './message-batches';
export * from './meta';
export * from './twilio';
export * from './paddle';
export * from './pagerduty';
export * from './schedule';
export * from './shopify';
export * from './sns';
export * from './slack';
export * from './square';
export * from './standard-webhooks';
export * from './stripe';
export * from './zoom';

/** Every provider kind the inbox serves: adding one is its facts file and a line here. */
export const ALL_PROVIDER_FACTS = [
  AnswerlineFacts,
  EchonovaFacts,
  StandardWebhooksFacts,
  StripeFacts,
  GitHubFacts,
  HmacFacts,
  DiscordFacts,
  SquareFacts,
  SlackFacts,
  ZoomFacts,
  MetaFacts,
  TwilioFacts,
  ShopifyFacts,
  PaddleFacts,
  PagerDutyFacts,
  LinearFacts,
  SnsFacts,
  MessageBatchesFacts,
] as const satisfies readonly ProviderFacts[];

type AnyProviderFacts = (typeof ALL_PROVIDER_FACTS)[number];

/** An adapter kind the runtime knows. */
export type AdapterKindName = AnyProviderFacts['kind'];

/** An adapter kind whose provider has a signing secret: neither certificate-signed nor polled only. */
export type SecretKindName = Exclude<
  AnyProviderFacts,
  { readonly requests: { readonly certificateSigned: true } } | { readonly requests: { readonly polledOnly: true } }
>['kind'];

/** `message-batches` → `MESSAGE_BATCHES`. */
type ConstantName<Kind extends string> = Kind extends `${infer Head}-${infer Tail}` ? `${Uppercase<Head>}_${ConstantName<Tail>}` : Uppercase<Kind>;

/** The adapters the runtime knows, by constant name (`AdapterKind.MESSAGE_BATCHES` is `message-batches`); a provider preset names one of these. */
export const AdapterKind = Object.fromEntries(ALL_PROVIDER_FACTS.map((facts) => [facts.kind.toUpperCase().replace(/-/g, '_'), facts.kind])) as {
  readonly [Facts in AnyProviderFacts as ConstantName<Facts['kind']>]: Facts['kind'];
};

const FACTS_BY_KIND: ReadonlyMap<string, ProviderFacts> = new Map(ALL_PROVIDER_FACTS.map((facts) => [facts.kind, facts]));

/** The facts of an adapter kind; undefined for a kind the runtime does not know. */
export function providerFactsOf(kind: string): ProviderFacts | undefined {
  return FACTS_BY_KIND.get(kind);
}

const kindsWhere = (fact: (facts: ProviderFacts) => boolean): readonly string[] => ALL_PROVIDER_FACTS.filter(fact).map((facts) => facts.kind);

/** Adapters whose provider signs the URL it posts to, configured with the preset (behind a custom domain it cannot be rebuilt). */
export const URL_SIGNING_ADAPTERS = kindsWhere((facts) => facts.requests.signsUrl);

/** Adapters whose provider checks the endpoint with a `GET` (Meta's subscription): the API serves `GET /hooks/<name>` for them too. */
export const GET_CHECKED_ADAPTERS = kindsWhere((facts) => facts.requests.getChecked);

/** Adapters whose requests name the certificate that signed them (SNS). */
export const CERTIFICATE_SIGNED_ADAPTERS = kindsWhere((facts) => facts.requests.certificateSigned);

/** Adapters of APIs that send no webhooks and are only polled (a batch API): no route, no verifier, no signing secret. */
export const POLLED_ONLY_ADAPTERS = kindsWhere((facts) => facts.requests.polledOnly);

/**
 * Adapters whose providers have no signing secret: none is created, granted, output or given
 * (requests named by their certificate, or no requests at all).
 */
export const SECRETLESS_ADAPTERS = kindsWhere((facts) => facts.requests.certificateSigned || facts.requests.polledOnly);

/** Adapters the reconciler can poll: those with polling defaults. */
export const POLLED_ADAPTERS = kindsWhere((facts) => facts.polling !== undefined);

/**
 * How long after an event a provider may still deliver it (its retries, or a redelivery an
 * operator can ask for), by adapter kind, in seconds. An inbox row must outlive it: a retry that
 * finds its row expired is stored and processed a second time.
 */
export const PROVIDER_REDELIVERY_SECONDS: Readonly<Record<string, number>> = Object.fromEntries(
  ALL_PROVIDER_FACTS.map((facts) => [facts.kind, facts.redeliverySeconds]),
);

type PolledFacts = Extract<AnyProviderFacts, { readonly polling: object }>;

/** Polling defaults per adapter kind. */
export const PollingDefaults = {
  ...(Object.fromEntries(ALL_PROVIDER_FACTS.flatMap((facts) => (facts.polling ? [[facts.kind, facts.polling]] : []))) as {
    readonly [Facts in PolledFacts as Facts['kind']]: Facts['polling'];
  }),
  /** A provider without polling: its submissions are only checked for a delivery. */
  ledgerOnly: {
    horizonSeconds: AnswerlineLifecycle.HORIZON_SECONDS,
    recheckSeconds: 900,
  },
} as const;

/** A provider's name: its path segment `/hooks/<name>` and its key namespace. Checked at synth, at cold start and by the ledger client. */
export const PROVIDER_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** The path under which each provider is served: `POST /hooks/<name>`. */
export const HOOKS_PATH = '/hooks';

/** The stage of a REST API ingress: its URL is `https://<api id>.execute-api.<region>.amazonaws.com/prod`. */
export const REST_API_STAGE_NAME = 'prod';

/**
 * Deadlines providers document for their resources, in seconds after submission: after them the
 * resource may be gone, so a submission still unread is polled before and alarmed on (the ledger
 * client's `deadlineSeconds`, by provider name, or a submission's own `deadline`). Answerline and
 * Echonova document none: their submissions have no deadline unless one is given.
 */
export const ProviderDeadlines = {
  /** OpenAI background mode: a response created with `store=false` may be deleted about 10 minutes after it is created. */
  OPENAI_UNSTORED_BACKGROUND_RESPONSE_SECONDS: 10 * 60,
} as const;
