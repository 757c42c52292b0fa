/**
 * The AWS JSON-protocol calls the fault proxy understands, and the answers AWS gives when it
 * throttles one: DynamoDB (awsJson1_0), SQS (awsJson1_0 with its query-compatible error header)
 * and EventBridge (awsJson1_1), each named by its `X-Amz-Target` header. The error shapes are
 * AWS's own, documented in docs/LOCAL-TWIN.md#faults-aws-produces, so that the SDK raises exactly
 * the exception it raises in AWS (and its retry strategy treats it as the throttling it is).
 */
import { randomUUID } from 'node:crypto';

export type AwsService = 'dynamodb' | 'sqs' | 'events';

/** One request a function made, as the proxy reads it. */
export interface AwsCall {
  readonly service: AwsService;
  /** The operation, e.g. `UpdateItem`, `SendMessageBatch`, `PutEvents`. */
  readonly operation: string;
  /** The request's JSON body. */
  readonly input: Record<string, unknown>;
  /** The access key id of its signature: which role (which function) made it. */
  readonly accessKeyId?: string;
}

const TARGET_PREFIX: Readonly<Record<string, AwsService>> = {
  'DynamoDB_20120810.': 'dynamodb',
  'AmazonSQS.': 'sqs',
  'AWSEvents.': 'events',
};

/** The service and operation an `X-Amz-Target` names; undefined for anything else (S3, an unknown service). */
export function targetOf(header: string | undefined): { service: AwsService; operation: string } | undefined {
  for (const [prefix, service] of Object.entries(TARGET_PREFIX)) {
    if (header?.startsWith(prefix)) return { service, operation: header.slice(prefix.length) };
  }
  return undefined;
}

/** The throttling errors each service answers with. */
export const THROTTLING_ERRORS = {
  /** DynamoDB: a provisioned table (or a partition) over its capacity; `ThrottlingException`: an on-demand table scaling up. */
  dynamodb: ['ProvisionedThroughputExceededException', 'ThrottlingException'],
  /** SQS: its own `RequestThrottled`, or the common `ThrottlingException`. */
  sqs: ['RequestThrottled', 'ThrottlingException'],
  events: ['ThrottlingException'],
} as const satisfies Record<AwsService, readonly string[]>;

export type ThrottlingError = (typeof THROTTLING_ERRORS)[AwsService][number];

/** An HTTP answer the proxy writes. */
export interface WireAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

const DYNAMODB_MESSAGES: Readonly<Record<string, string>> = {
  ProvisionedThroughputExceededException:
    'The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.',
  ThrottlingException:
    'Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your table or index so please try again shortly. If exceptions persist, check if you have a hot key: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html',
};

/**
 * AWS's answer to a throttled call of `service`:
 * - DynamoDB: 400, `__type` `com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException`
 *   (or `com.amazon.coral.availability#ThrottlingException`);
 * - SQS: `com.amazonaws.sqs#RequestThrottled` (403, as the service model says) with
 *   `x-amzn-query-error: RequestThrottled;Sender`, or the common `ThrottlingException` (400,
 *   `ThrottlingException;Sender`);
 * - EventBridge: 400, `ThrottlingException`, "Rate exceeded".
 */
export function throttledAnswer(service: AwsService, error: ThrottlingError = THROTTLING_ERRORS[service][0]): WireAnswer {
  if (!(THROTTLING_ERRORS[service] as readonly string[]).includes(error)) throw new Error(`${service} does not throttle with ${error}`);
  const requestId = randomUUID();
  switch (service) {
    case 'dynamodb':
      return json('1.0', 400, requestId, {
        __type: error === 'ThrottlingException' ? 'com.amazon.coral.availability#ThrottlingException' : `com.amazonaws.dynamodb.v20120810#${error}`,
        message: DYNAMODB_MESSAGES[error],
      });
    case 'sqs': {
      const own = error === 'RequestThrottled';
      return json(
        '1.0',
        own ? 403 : 400,
        requestId,
        { __type: own ? 'com.amazonaws.sqs#RequestThrottled' : 'com.amazon.coral.availability#ThrottlingException', message: 'Rate exceeded' },
        { 'x-amzn-query-error': `${error};Sender` },
      );
    }
    case 'events':
      return json('1.1', 400, requestId, { __type: 'ThrottlingException', message: 'Rate exceeded' });
  }
}

/**
 * AWS's answer to a call of `service` it failed on its own side (a 5xx the SDK retries as a server
 * error, then raises): DynamoDB 500 `com.amazonaws.dynamodb.v20120810#InternalServerError`; SQS
 * (JSON protocol) 500 `InternalError` with `x-amzn-query-error: InternalError;Receiver`;
 * EventBridge 500 `InternalException`, the server error its operations name.
 */
export function unavailableAnswer(service: AwsService): WireAnswer {
  const requestId = randomUUID();
  switch (service) {
    case 'dynamodb':
      return json('1.0', 500, requestId, { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'Internal server error' });
    case 'sqs':
      return json(
        '1.0',
        500,
        requestId,
        { __type: 'InternalError', message: 'We encountered an internal error. Please try again.' },
        { 'x-amzn-query-error': 'InternalError;Receiver' },
      );
    case 'events':
      return json('1.1', 500, requestId, { __type: 'InternalException', message: 'Internal service error' });
  }
}

function json(version: '1.0' | '1.1', status: number, requestId: string, body: object, headers: Record<string, string> = {}): WireAnswer {
  return { status, headers: { 'content-type': `application/x-amz-json-${version}`, 'x-amzn-requestid': requestId, ...headers }, body: JSON.stringify(body) };
}
