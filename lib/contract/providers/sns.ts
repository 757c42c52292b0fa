import { ProviderFacts, SECRET_SIGNED_REQUESTS, SecretFormat } from './facts';

/**
 * Amazon SNS's documented HTTP/S delivery (docs/providers/sns.md): a subscription's delivery
 * policy retries a message for at most an hour in all, every attempt carrying the message's
 * original signature and `Timestamp`.
 */
export const SNS_REDELIVERY_SECONDS = 3_600;

/** How old a message's signed `Timestamp` may be: SNS's whole retry window and 5 minutes of clock skew. */
export const SNS_PAST_TOLERANCE_SECONDS = SNS_REDELIVERY_SECONDS + 300;

/** A message's `Type`. */
export const SnsMessageType = {
  NOTIFICATION: 'Notification',
  SUBSCRIPTION_CONFIRMATION: 'SubscriptionConfirmation',
  UNSUBSCRIBE_CONFIRMATION: 'UnsubscribeConfirmation',
} as const;

/** The headers SNS sets on each HTTP/S request; none is signed (the body is). */
export const SnsHeaders = {
  MESSAGE_TYPE: 'x-amz-sns-message-type',
  MESSAGE_ID: 'x-amz-sns-message-id',
  TOPIC_ARN: 'x-amz-sns-topic-arn',
  SUBSCRIPTION_ARN: 'x-amz-sns-subscription-arn',
  /** Set to `true` on a subscription with raw message delivery: the body is then the bare, unsigned message. */
  RAW_DELIVERY: 'x-amz-sns-rawdelivery',
} as const;

/** The DNS suffix of SNS's endpoints (`sns.<region>.<suffix>`) in each partition the preset serves. */
export const SNS_PARTITION_DNS_SUFFIX: Readonly<Record<string, string>> = {
  aws: 'amazonaws.com',
  'aws-cn': 'amazonaws.com.cn',
  'aws-us-gov': 'amazonaws.com',
};

/** A standard or FIFO topic's ARN: partition, region, account, name. */
const TOPIC_ARN = /^arn:([a-z-]+):sns:([a-z]{2}(?:-[a-z]+)+-\d):(\d{12}):([A-Za-z0-9_-]{1,256}(?:\.fifo)?)$/;

/** A topic ARN's parts, or undefined when it is not a topic ARN of a partition the preset serves. */
export function parseTopicArn(arn: string): { readonly partition: string; readonly region: string } | undefined {
  const match = TOPIC_ARN.exec(arn);
  if (!match || SNS_PARTITION_DNS_SUFFIX[match[1]] === undefined) return undefined;
  return { partition: match[1], region: match[2] };
}

/** The origin SNS signs and confirms from for a topic: `https://sns.<region>.<partition's suffix>`. */
export function snsOriginOf(topic: { readonly partition: string; readonly region: string }): string {
  return `https://sns.${topic.region}.${SNS_PARTITION_DNS_SUFFIX[topic.partition]}`;
}

/**
 * What is wrong with the configured topic ARNs, each problem as it follows the field's name; empty
 * when they are usable. `checkedLater` tells an ARN that is only known at deployment (a CDK token).
 */
export function topicArnProblems(arns: unknown, checkedLater: (arn: string) => boolean = () => false): string[] {
  if (!Array.isArray(arns) || arns.length === 0) return ['is required: the ARNs of the topics whose subscriptions post here'];
  return arns.flatMap((arn, index) =>
    typeof arn === 'string' && (checkedLater(arn) || parseTopicArn(arn))
      ? []
      : [`[${index}] ${JSON.stringify(arn)} is not an SNS topic ARN of the aws, aws-cn or aws-us-gov partition`],
  );
}

/** Amazon SNS: the facts every table by provider kind derives from. */
export const SnsFacts = {
  kind: 'sns',
  title: 'Amazon SNS',
  secretFormat: SecretFormat.NONE,
  redeliverySeconds: SNS_REDELIVERY_SECONDS,
  tolerance: { pastSeconds: SNS_PAST_TOLERANCE_SECONDS },
  requests: { ...SECRET_SIGNED_REQUESTS, certificateSigned: true },
  polling: undefined,
  eventType: { jsonPath: 'Type' },
  rotationRefusal: undefined,
} as const satisfies ProviderFacts;
