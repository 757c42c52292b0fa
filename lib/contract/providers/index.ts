/**
 * What each provider kind is known to do, from its documentation, one file per provider: how it
 * retries, how long after an event it may still deliver it, how it is polled by default. Here:
 * the adapters the runtime knows, how a provider's name is spelled, and the tables by kind.
 */
import { ANSWERLINE_REDELIVERY_SECONDS, AnswerlineLifecycle, AnswerlinePolling } from './answerline';
import { ECHONOVA_REDELIVERY_SECONDS, EchonovaPolling } from './echonova';
import { GITHUB_REDELIVERY_SECONDS } from './github';
import { HMAC_REDELIVERY_SECONDS } from './hmac';
import { META_REDELIVERY_SECONDS } from './meta';
import { STANDARD_WEBHOOKS_REDELIVERY_SECONDS } from './standard-webhooks';
import { STRIPE_REDELIVERY_SECONDS } from './stripe';

export * from './answerline';
export * from './echonova';
export * from './github';
export * from './hmac';
export * from './meta';
export * from './schedule';
export * from './standard-webhooks';
export * from './stripe';

/** A provider's name: its path segment `/hooks/<name>` and its key namespace. Checked at synth, at cold start and by the ledger client. */
export const PROVIDER_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** The path under which each provider is served: `POST /hooks/<name>`. */
export const HOOKS_PATH = '/hooks';

/** The adapters the runtime knows; a provider preset names one of these. */
export const AdapterKind = {
  ANSWERLINE: 'answerline',
  ECHONOVA: 'echonova',
  STANDARD_WEBHOOKS: 'standard-webhooks',
  STRIPE: 'stripe',
  GITHUB: 'github',
  HMAC: 'hmac',
  META: 'meta',
} as const;

/** Adapters whose provider checks the endpoint with a `GET` (Meta's subscription): the API serves `GET /hooks/<name>` for them too. */
export const GET_CHECKED_ADAPTERS: readonly string[] = [AdapterKind.META];

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
  [AdapterKind.META]: META_REDELIVERY_SECONDS,
};

/** Polling defaults per adapter kind. */
export const PollingDefaults = {
  answerline: AnswerlinePolling,
  echonova: EchonovaPolling,
  /** A provider without polling: its submissions are only checked for a delivery. */
  ledgerOnly: {
    horizonSeconds: AnswerlineLifecycle.HORIZON_SECONDS,
    recheckSeconds: 900,
  },
} as const;
