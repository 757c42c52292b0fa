/** Answerline's documented behaviour (docs/providers/answerline.md). */
import { DeliverySchedule, retryWindowSeconds } from './schedule';
import { ProviderFacts, SECRET_SIGNED_REQUESTS, SecretFormat } from './facts';

/** 10 attempts; before each retry a wait that starts at 5 s and doubles (shortened by up to half); 15 s per attempt. */
export const AnswerlineDelivery: DeliverySchedule = {
  maxWaitsSeconds: Array.from({ length: 9 }, (_, retry) => 5 * 2 ** retry),
  attemptTimeoutSeconds: 15,
};

/**
 * Answerline's task lifecycle, from which its polling horizon derives: a task has 4 h from
 * creation to start (then it fails with QUEUE_WAIT_EXCEEDED), 5 min from its first start to
 * finish, and its delivery retries run for up to 2,555 s of waits plus 10 attempts of 15 s after that.
 */
const QUEUE_WAIT_SECONDS = 4 * 3600;
const RUN_SECONDS = 5 * 60;
/** 5 × (2⁹ − 1) + 10 × 15 = 2,705 s (45 min 5 s). */
const DELIVERY_RETRY_SECONDS = retryWindowSeconds(AnswerlineDelivery);

export const AnswerlineLifecycle = {
  QUEUE_WAIT_SECONDS,
  RUN_SECONDS,
  DELIVERY_RETRY_SECONDS,
  /** 14,400 + 300 + 2,705 = 17,405 s (4 h 50 min 5 s) after submission. */
  HORIZON_SECONDS: QUEUE_WAIT_SECONDS + RUN_SECONDS + DELIVERY_RETRY_SECONDS,
} as const;

export const AnswerlinePolling = {
  taskUrlTemplate: 'https://api.answerline.dev/v1/async/task/{taskId}',
  horizonSeconds: AnswerlineLifecycle.HORIZON_SECONDS,
  /** A task can go from PROCESSING back to QUEUED; look again every 10 minutes. */
  recheckSeconds: 600,
} as const;

/** A retry can come until the horizon: the lifecycle ends with the delivery's last attempt. */
export const ANSWERLINE_REDELIVERY_SECONDS = AnswerlineLifecycle.HORIZON_SECONDS;

/** Answerline: the facts every table by provider kind derives from. */
export const AnswerlineFacts = {
  kind: 'answerline',
  title: 'Answerline',
  secretFormat: SecretFormat.WHSEC,
  redeliverySeconds: ANSWERLINE_REDELIVERY_SECONDS,
  tolerance: undefined,
  requests: SECRET_SIGNED_REQUESTS,
  polling: AnswerlinePolling,
  eventType: { jsonPath: 'task.status' },
  rotationRefusal: undefined,
} as const satisfies ProviderFacts;
