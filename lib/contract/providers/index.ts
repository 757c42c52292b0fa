/**
 * What each provider kind is known to do, from its documentation, one file per provider: how it
 * retries, how long after an event it may still deliver it, how it is polled by default. Here:
 * the adapters the runtime knows, how a provider's name is spelled, and the tables by kind.
 */
import { ANSWERLINE_REDELIVERY_SECONDS, AnswerlineLifecycle, AnswerlinePolling } from './answerline';
import { DISCORD_REDELIVERY_SECONDS } from './discord';
import { ECHONOVA_REDELIVERY_SECONDS, EchonovaPolling } from './echonova';
import { GITHUB_REDELIVERY_SECONDS } from './github';
import { HMAC_REDELIVERY_SECONDS } from './hmac';
import { LINEAR_REDELIVERY_SECONDS } from './linear';
import { MESSAGE_BATCHES_REDELIVERY_SECONDS, MessageBatchesPolling } from './message-batches';
import { META_REDELIVERY_SECONDS } from './meta';
import { TWILIO_REDELIVERY_SECONDS } from './twilio';
import { PADDLE_REDELIVERY_SECONDS } from './paddle';
import { PAGERDUTY_REDELIVERY_SECONDS } from './pagerduty';
import { SHOPIFY_REDELIVERY_SECONDS } from './shopify';
import { SNS_REDELIVERY_SECONDS } from './sns';
import { SLACK_REDELIVERY_SECONDS } from './slack';
import { SQUARE_REDELIVERY_SECONDS } from './square';
import { STANDARD_WEBHOOKS_REDELIVERY_SECONDS } from './standard-webhooks';
import { STRIPE_REDELIVERY_SECONDS } from './stripe';
import { ZOOM_REDELIVERY_SECONDS } from './zoom';

export * from './answerline';
export * from './discord';
export * from './echonova';
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

/** A provider's name: its path segment `/hooks/<name>` and its key namespace. Checked at synth, at cold start and by the ledger client. */
export const PROVIDER_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** The path under which each provider is served: `POST /hooks/<name>`. */
export const HOOKS_PATH = '/hooks';

/** The stage of a REST API ingress: its URL is `https://<api id>.execute-api.<region>.amazonaws.com/prod`. */
export const REST_API_STAGE_NAME = 'prod';

/** The adapters the runtime knows; a provider preset names one of these. */
export const AdapterKind = {
  ANSWERLINE: 'answerline',
  ECHONOVA: 'echonova',
  STANDARD_WEBHOOKS: 'standard-webhooks',
  STRIPE: 'stripe',
  GITHUB: 'github',
  HMAC: 'hmac',
  DISCORD: 'discord',
  SQUARE: 'square',
  SLACK: 'slack',
  ZOOM: 'zoom',
  META: 'meta',
  TWILIO: 'twilio',
  SHOPIFY: 'shopify',
  PADDLE: 'paddle',
  PAGERDUTY: 'pagerduty',
  LINEAR: 'linear',
  SNS: 'sns',
  /** A batch API (Anthropic Message Batches): polled only, one result per request of a batch. */
  MESSAGE_BATCHES: 'message-batches',
} as const;

/** Adapters whose provider signs the URL it posts to, configured with the preset (behind a custom domain it cannot be rebuilt). */
export const URL_SIGNING_ADAPTERS: readonly string[] = [AdapterKind.SQUARE, AdapterKind.TWILIO];

/** Adapters whose provider checks the endpoint with a `GET` (Meta's subscription): the API serves `GET /hooks/<name>` for them too. */
export const GET_CHECKED_ADAPTERS: readonly string[] = [AdapterKind.META];

/** Adapters whose requests name the certificate that signed them (SNS). */
export const CERTIFICATE_SIGNED_ADAPTERS: readonly string[] = [AdapterKind.SNS];

/** Adapters of APIs that send no webhooks and are only polled (a batch API): no route, no verifier, no signing secret. */
export const POLLED_ONLY_ADAPTERS: readonly string[] = [AdapterKind.MESSAGE_BATCHES];

/**
 * Adapters whose providers have no signing secret: none is created, granted, output or given
 * (requests named by their certificate, or no requests at all).
 */
export const SECRETLESS_ADAPTERS: readonly string[] = [...CERTIFICATE_SIGNED_ADAPTERS, ...POLLED_ONLY_ADAPTERS];

/**
 * How long after an event a provider may still deliver it (its retries, or a redelivery an
 * operator can ask for), by adapter kind, in seconds. An inbox row must outlive it: a retry that
 * finds its row expired is stored and processed a second time.
 */
export const PROVIDER_REDELIVERY_SECONDS: Readonly<Record<string, number>> = {
  [AdapterKind.ANSWERLINE]: ANSWERLINE_REDELIVERY_SECONDS,
  [AdapterKind.ECHONOVA]: ECHONOVA_REDELIVERY_SECONDS,
  [AdapterKind.STANDARD_WEBHOOKS]: STANDARD_WEBHOOKS_REDELIVERY_SECONDS,
  [AdapterKind.STRIPE]: STRIPE_REDELIVERY_SECONDS,
  [AdapterKind.GITHUB]: GITHUB_REDELIVERY_SECONDS,
  [AdapterKind.HMAC]: HMAC_REDELIVERY_SECONDS,
  [AdapterKind.SHOPIFY]: SHOPIFY_REDELIVERY_SECONDS,
  [AdapterKind.PADDLE]: PADDLE_REDELIVERY_SECONDS,
  [AdapterKind.PAGERDUTY]: PAGERDUTY_REDELIVERY_SECONDS,
  [AdapterKind.LINEAR]: LINEAR_REDELIVERY_SECONDS,
  [AdapterKind.DISCORD]: DISCORD_REDELIVERY_SECONDS,
  [AdapterKind.SQUARE]: SQUARE_REDELIVERY_SECONDS,
  [AdapterKind.SLACK]: SLACK_REDELIVERY_SECONDS,
  [AdapterKind.ZOOM]: ZOOM_REDELIVERY_SECONDS,
  [AdapterKind.META]: META_REDELIVERY_SECONDS,
  [AdapterKind.TWILIO]: TWILIO_REDELIVERY_SECONDS,
  [AdapterKind.SNS]: SNS_REDELIVERY_SECONDS,
  [AdapterKind.MESSAGE_BATCHES]: MESSAGE_BATCHES_REDELIVERY_SECONDS,
};

/** Polling defaults per adapter kind. */
export const PollingDefaults = {
  answerline: AnswerlinePolling,
  echonova: EchonovaPolling,
  'message-batches': MessageBatchesPolling,
  /** A provider without polling: its submissions are only checked for a delivery. */
  ledgerOnly: {
    horizonSeconds: AnswerlineLifecycle.HORIZON_SECONDS,
    recheckSeconds: 900,
  },
} as const;

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
