/**
 * Published AWS prices the bench's cost figures use: US East (N. Virginia), on-demand, list
 * prices after any free tier, each with the page it comes from. This is the only file that holds
 * a price; change one here and every figure follows.
 *
 * Checked against the pages below when this file was written; AWS changes prices, so a reader
 * who needs today's numbers should check the page named beside each one.
 */

export interface Price {
  /** US dollars per `unit`. */
  readonly usd: number;
  readonly unit: string;
  readonly source: string;
  readonly note?: string;
}

export const PRICES = {
  apiGatewayHttpRequest: {
    usd: 1.0 / 1e6,
    unit: 'HTTP API request (first 300 million a month; metered in 512 KB increments)',
    source: 'https://aws.amazon.com/api-gateway/pricing/',
  },
  lambdaRequest: {
    usd: 0.2 / 1e6,
    unit: 'Lambda invocation',
    source: 'https://aws.amazon.com/lambda/pricing/',
  },
  lambdaArmGbSecond: {
    usd: 0.0000133334,
    unit: 'GB-second of Arm (Graviton) duration, first 7.5 billion GB-s a month; billed per 1 ms',
    source: 'https://aws.amazon.com/lambda/pricing/',
  },
  dynamodbWriteRequestUnit: {
    usd: 0.625 / 1e6,
    unit: 'on-demand write request unit (1 KB of item per standard write; each GSI write billed too)',
    source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/',
  },
  dynamodbReadRequestUnit: {
    usd: 0.125 / 1e6,
    unit: 'on-demand read request unit (4 KB strongly consistent, or two eventually consistent reads)',
    source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/',
  },
  sqsRequest: {
    usd: 0.4 / 1e6,
    unit: 'standard queue request (each 64 KB chunk of a payload is one request; 1 million to 100 billion a month)',
    source: 'https://aws.amazon.com/sqs/pricing/',
  },
  s3Put: {
    usd: 0.005 / 1000,
    unit: 'S3 Standard PUT, COPY, POST or LIST request',
    source: 'https://aws.amazon.com/s3/pricing/',
  },
  s3StandardGbMonth: {
    usd: 0.023,
    unit: 'GB-month of S3 Standard storage (first 50 TB a month)',
    source: 'https://aws.amazon.com/s3/pricing/',
  },
  s3Get: {
    usd: 0.0004 / 1000,
    unit: 'S3 Standard GET or SELECT request',
    source: 'https://aws.amazon.com/s3/pricing/',
  },
  eventBridgeEvent: {
    usd: 1.0 / 1e6,
    unit: 'custom event published (each 64 KB chunk of an entry is one event)',
    source: 'https://aws.amazon.com/eventbridge/pricing/',
  },
  secretsManagerApiCall: {
    usd: 0.05 / 10_000,
    unit: 'Secrets Manager API call',
    source: 'https://aws.amazon.com/secrets-manager/pricing/',
    note: 'plus $0.40 per secret per month (secretsManagerSecretMonth), in the all-in bill',
  },
  secretsManagerSecretMonth: {
    usd: 0.4,
    unit: 'secret stored for a month',
    source: 'https://aws.amazon.com/secrets-manager/pricing/',
  },
  xrayTraceRecorded: {
    usd: 5.0 / 1e6,
    unit: 'X-Ray trace recorded (after the free 100,000 a month)',
    source: 'https://aws.amazon.com/xray/pricing/',
  },
  cloudWatchCustomMetricMonth: {
    usd: 0.3,
    unit: 'custom metric for a month (first 10,000; prorated by the hour: a metric not sent in an hour costs nothing for it)',
    source: 'https://aws.amazon.com/cloudwatch/pricing/',
  },
  cloudWatchAlarmMetricMonth: {
    usd: 0.1,
    unit: 'standard-resolution alarm metric for a month (a metric-math alarm pays for each metric it reads)',
    source: 'https://aws.amazon.com/cloudwatch/pricing/',
  },
  cloudWatchCompositeAlarmMonth: {
    usd: 0.5,
    unit: 'composite alarm for a month',
    source: 'https://aws.amazon.com/cloudwatch/pricing/',
  },
  cloudWatchDashboardMonth: {
    usd: 3.0,
    unit: "dashboard for a month (an account's first 3 dashboards of up to 50 metrics each are free)",
    source: 'https://aws.amazon.com/cloudwatch/pricing/',
  },
  dynamodbStorageGbMonth: {
    usd: 0.25,
    unit: 'GB-month of DynamoDB Standard table storage (after the free 25 GB; each item and index entry counts 100 bytes more)',
    source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/',
  },
  dynamodbPitrGbMonth: {
    usd: 0.2,
    unit: "GB-month of continuous backup (point-in-time recovery), by the table's size",
    source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/',
  },
  cloudWatchLogsIngestedGb: {
    usd: 0.5,
    unit: 'GB of standard log data ingested into CloudWatch Logs',
    source: 'https://aws.amazon.com/cloudwatch/pricing/',
  },
} as const satisfies Record<string, Price>;

export type PriceName = keyof typeof PRICES;

/** The payload chunk by which SQS and EventBridge bill one request or event. */
export const BILLING_CHUNK_BYTES = 64 * 1024;
/** The request size increment by which API Gateway HTTP APIs meter one request. */
export const API_GATEWAY_INCREMENT_BYTES = 512 * 1024;
