/**
 * What each provider kind is known to do, from its documentation: the adapters the runtime
 * knows, how a provider's name is spelled, Answerline's task lifecycle, how long after an event
 * each kind may still deliver it, and how each is polled by default.
 */

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
} as const;

/**
 * Answerline's task lifecycle (seed 000), from which its polling horizon derives: a task has
 * 4 h from creation to start (then it fails with QUEUE_WAIT_EXCEEDED), 5 min from its first
 * start to finish, and its delivery retries run for up to about 43 min after that.
 */
export const AnswerlineLifecycle = {
  QUEUE_WAIT_SECONDS: 4 * 3600,
  RUN_SECONDS: 5 * 60,
  DELIVERY_RETRY_SECONDS: 43 * 60,
  /** 14,400 + 300 + 2,580 = 17,280 s (4 h 48 min) after submission. */
  HORIZON_SECONDS: 4 * 3600 + 5 * 60 + 43 * 60,
} as const;

/**
 * How long after an event a provider may still deliver it (its retries, or a redelivery an
 * operator can ask for), by adapter kind, in seconds. An inbox row must outlive it: a retry that
 * finds its row expired is stored and processed a second time. Documented windows: Answerline,
 * a task's lifecycle horizon; Echonova, 3 attempts within about 45 s; OpenAI and other Standard
 * Webhooks senders, up to 72 h of retries; Stripe, up to three days of retries; GitHub, manual
 * redelivery of deliveries of the past three days. For a generic HMAC sender, three days.
 */
export const PROVIDER_REDELIVERY_SECONDS: Readonly<Record<string, number>> = {
  [AdapterKind.ANSWERLINE]: AnswerlineLifecycle.HORIZON_SECONDS,
  [AdapterKind.ECHONOVA]: 60,
  [AdapterKind.STANDARD_WEBHOOKS]: 72 * 3600,
  [AdapterKind.STRIPE]: 3 * 86_400,
  [AdapterKind.GITHUB]: 3 * 86_400,
  [AdapterKind.HMAC]: 3 * 86_400,
};

/** Polling defaults per adapter kind. */
export const PollingDefaults = {
  answerline: {
    taskUrlTemplate: 'https://api.answerline.dev/v1/async/task/{taskId}',
    horizonSeconds: AnswerlineLifecycle.HORIZON_SECONDS,
    /** A task can go from PROCESSING back to QUEUED; look again every 10 minutes. */
    recheckSeconds: 600,
  },
  echonova: {
    // Echonova documents no job lifecycle (seed 001), only its deliveries (3 attempts within
    // about 45 s), and names no job URL: the template has no default, and the horizon is an
    // assumption (an hour covers most jobs; set it for the account's longest).
    horizonSeconds: 3600,
    recheckSeconds: 300,
  },
  /** A provider without polling: its submissions are only checked for a delivery. */
  ledgerOnly: {
    horizonSeconds: AnswerlineLifecycle.HORIZON_SECONDS,
    recheckSeconds: 900,
  },
} as const;
