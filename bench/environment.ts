/**
 * What every section of the bench runs against: the emulators (dynalite, fauxqs), the Secrets
 * Manager and EventBridge stand-ins, all on 127.0.0.1 and started here, and factories for real
 * AWS SDK v3 clients pointed at them. Nothing is mocked. The emulators run in a process of their
 * own, as DynamoDB and SQS run outside a Lambda function: in the bench's process their work and
 * their heap would share the thread of every handler the bench times.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { fork } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { CreateSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import type { LineWriter } from '../lambda/shared/runtime/telemetry';
import { EventBridgeStandIn, httpApiEvent, LOCAL_AWS, SecretsManagerStandIn, standardWebhooksHeaders } from '#twin/testing';

/** Where the emulators listen, and how to stop them when this environment started them. */
export interface EmulatorEndpoints {
  readonly dynamodbEndpoint: string;
  readonly sqsEndpoint: string;
  stop(): Promise<void>;
}

/** The emulators in a child process (`emulators-process.mjs`); stopping disconnects it and waits for it to exit. */
async function startEmulatorProcess(): Promise<EmulatorEndpoints> {
  const child = fork(`${__dirname}/emulators-process.mjs`, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const endpoints = await new Promise<{ dynamodbEndpoint: string; sqsEndpoint: string }>((resolve, reject) => {
    child.once('message', (message) => resolve(message as { dynamodbEndpoint: string; sqsEndpoint: string }));
    child.once('exit', (code) => reject(new Error(`the emulator process exited with ${code} before it listened`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    ...endpoints,
    async stop() {
      child.disconnect();
      await exited;
    },
  };
}

export class BenchEnvironment {
  private readonly clients: { destroy(): void }[] = [];

  private constructor(
    readonly emulators: EmulatorEndpoints,
    readonly secretsStandIn: SecretsManagerStandIn,
    readonly secretsEndpoint: string,
    readonly eventBridge: EventBridgeStandIn,
    readonly eventBridgeEndpoint: string,
    /** True when this environment started the emulators and must stop them. */
    private readonly ownsEmulators: boolean,
  ) {}

  /**
   * Starts the stand-ins, and the emulators unless `emulators` are given (jest's global setup
   * starts them once for the whole test run; `fromEnvironment` finds them).
   */
  static async start(emulators?: EmulatorEndpoints): Promise<BenchEnvironment> {
    let owned = false;
    if (!emulators) {
      emulators = await startEmulatorProcess();
      owned = true;
    }
    const secrets = new SecretsManagerStandIn();
    const secretsEndpoint = await secrets.start();
    const eventBridge = new EventBridgeStandIn();
    const eventBridgeEndpoint = await eventBridge.start();
    return new BenchEnvironment(emulators, secrets, secretsEndpoint, eventBridge, eventBridgeEndpoint, owned);
  }

  /** The emulators the `AWS_ENDPOINT_URL_*` variables point at, started by someone else. */
  static fromEnvironment(env: Record<string, string | undefined> = process.env): EmulatorEndpoints {
    const dynamodbEndpoint = env.AWS_ENDPOINT_URL_DYNAMODB;
    const sqsEndpoint = env.AWS_ENDPOINT_URL_SQS;
    if (!dynamodbEndpoint || !sqsEndpoint) throw new Error('AWS_ENDPOINT_URL_DYNAMODB and AWS_ENDPOINT_URL_SQS must name running emulators');
    return { dynamodbEndpoint, sqsEndpoint, stop: async () => undefined };
  }

  async stop(): Promise<void> {
    for (const client of this.clients) client.destroy();
    await this.eventBridge.stop();
    await this.secretsStandIn.stop();
    if (this.ownsEmulators) await this.emulators.stop();
  }

  private keep<C extends { destroy(): void }>(client: C): C {
    this.clients.push(client);
    return client;
  }

  dynamodb(endpoint = this.emulators.dynamodbEndpoint): DynamoDBClient {
    return this.keep(new DynamoDBClient({ endpoint, ...LOCAL_AWS }));
  }

  sqs(endpoint = this.emulators.sqsEndpoint): SQSClient {
    return this.keep(new SQSClient({ endpoint, ...LOCAL_AWS, useQueueUrlAsEndpoint: false }));
  }

  /** S3 on fauxqs, which serves it at its SQS endpoint. */
  s3(endpoint = this.emulators.sqsEndpoint): S3Client {
    return this.keep(new S3Client({ endpoint, ...LOCAL_AWS, forcePathStyle: true }));
  }

  secretsManager(): SecretsManagerClient {
    return this.keep(new SecretsManagerClient({ endpoint: this.secretsEndpoint, ...LOCAL_AWS }));
  }

  events(endpoint = this.eventBridgeEndpoint): EventBridgeClient {
    return this.keep(new EventBridgeClient({ endpoint, ...LOCAL_AWS }));
  }

  /** A new Standard Webhooks signing secret in the stand-in; its id and value. */
  async signingSecret(): Promise<{ id: string; value: string }> {
    const value = `whsec_${randomBytes(32).toString('base64')}`;
    const id = `bench/${randomUUID().slice(0, 8)}/signing-secret`;
    await this.secretsManager().send(new CreateSecretCommand({ Name: id, SecretString: value }));
    return { id, value };
  }

  /** A new bus on the EventBridge stand-in. */
  bus(label: string): string {
    const name = `bench-${label}-${randomUUID().slice(0, 8)}`;
    this.eventBridge.createBus(name);
    return name;
  }
}

/** A short unique prefix for one run's tables and queues. */
export function runPrefix(label: string): string {
  return `bench-${label}-${randomUUID().slice(0, 8)}`;
}

/**
 * Words of the answer text, drawn with a skewed frequency (a few are common, most are rare) so the
 * text deflates about as ordinary prose does: 2.1× at 700 bytes, 2.8× at 16 KiB with the
 * inline-body settings. A repeated letter would deflate 100-fold and make every item look smaller
 * than a real delivery's.
 */
const WORDS = (
  'the of and to in is that for it as was with be by on not this are or from at which but have an they you were there been one ' +
  'all we their has would when if so no will can more other what about up out them into only its time some could these two may ' +
  'then do first any now such like our over even most made after also did many before must through back years where much way ' +
  'well down should because each just those people how too little state good very make world still own see work long get here ' +
  'between both life being under never day same another know while last might great old year off come since against go came ' +
  'right used take three answer model result source context question summary figure value report'
).split(' ');

/** `bytes` characters of answer text, the same for the same seed. */
function answerText(bytes: number, seed: number): string {
  let state = seed >>> 0;
  const next = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
  let text = '';
  while (text.length < bytes) text += `${text ? ' ' : ''}${WORDS[Math.floor(next() ** 2.2 * WORDS.length)]}${next() < 0.08 ? '.' : ''}`;
  return text.slice(0, bytes);
}

/**
 * An Answerline delivery body (docs/providers/answerline.md: `task`, `credits`, `response`) of exactly `bytes` bytes,
 * a COMPLETED task of its own job, so every delivery is accepted, decided and yields one effect; its answer is text
 * that compresses like prose.
 */
export function deliveryBody(bytes: number): string {
  const id = randomUUID();
  const make = (answer: string) =>
    JSON.stringify({
      task: {
        id: `tsk_${id}`,
        status: 'COMPLETED',
        idempotencyKey: `job-${id}`,
        createdAt: '2026-09-18T10:00:00.000Z',
        startedAt: '2026-09-18T10:00:05.000Z',
        finishedAt: '2026-09-18T10:00:09.000Z',
      },
      credits: { charged: 1, remaining: 499 },
      response: { result: { answer, confidence: 0.93 } },
    });
  const bare = Buffer.byteLength(make(''));
  if (bare > bytes) throw new Error(`a delivery cannot be smaller than ${bare} bytes`);
  return make(answerText(bytes - bare, parseInt(id.slice(0, 8), 16)));
}

/** The Standard Webhooks headers of `body`, signed now. */
export function signedHeaders(body: string, secret: string, nowSeconds = Math.floor(Date.now() / 1000)): Record<string, string> {
  return standardWebhooksHeaders(secret, `msg_${randomUUID().replace(/-/g, '')}`, nowSeconds, Buffer.from(body));
}

/** A faithful API Gateway HTTP API (payload 2.0) event of a signed delivery to `/hooks/answerline`. */
export function signedDeliveryEvent(body: string, secret: string): APIGatewayProxyEventV2 {
  return httpApiEvent({
    path: '/hooks/answerline',
    headers: { host: 'bench.execute-api.us-east-1.amazonaws.com', 'user-agent': 'Answerline-Webhooks/1.0', ...signedHeaders(body, secret) },
    body: Buffer.from(body),
  });
}

/** The Lambda context a handler gets, with the timeout of its function. */
export function lambdaContext(functionName: string, timeoutMs: number): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'bench',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/**
 * Where the handlers' log lines go in the bench: built exactly as in Lambda, written with a
 * system call to /dev/null (as Lambda's stdout is a pipe), and counted, so the bench knows how
 * many bytes CloudWatch Logs would ingest.
 */
/** An EMF log line, as far as the metrics it defines. */
type EmfDocument = Record<string, unknown> & {
  readonly _aws?: {
    readonly CloudWatchMetrics: readonly { readonly Namespace: string; readonly Dimensions: string[][]; readonly Metrics: { readonly Name: string }[] }[];
  };
};

export class LogSink {
  private fd: number | undefined = openSync('/dev/null', 'w');
  bytes = 0;
  lines = 0;
  /**
   * Every custom metric the lines carried as EMF, by what CloudWatch bills as one metric: its
   * namespace, name, and dimension set with the values (`Namespace/Name{Dim=value,…}`).
   */
  readonly metrics = new Set<string>();

  readonly write: LineWriter = (line) => {
    const text = `${line}\n`;
    this.bytes += Buffer.byteLength(text);
    this.lines += 1;
    if (line.includes('"_aws"')) this.countMetrics(JSON.parse(line) as EmfDocument);
    if (this.fd !== undefined) writeSync(this.fd, text);
  };

  private countMetrics(document: EmfDocument): void {
    for (const directive of document._aws?.CloudWatchMetrics ?? []) {
      for (const dimensions of directive.Dimensions) {
        const values = dimensions.map((name) => `${name}=${String(document[name])}`).join(',');
        for (const metric of directive.Metrics) this.metrics.add(`${directive.Namespace}/${metric.Name}{${values}}`);
      }
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
