/**
 * The local AWS a stack runs on: the emulators (dynalite for DynamoDB, fauxqs for SQS and S3),
 * the stand-ins (Secrets Manager, EventBridge, Lambda Invoke, SNS's HTTPS host), the IAM gateway
 * every function calls through, and the fault proxies in front of DynamoDB, SQS (and S3) and
 * EventBridge through which a fault-injection run takes a service down, throttles it, answers
 * batches in part and makes indexes lag. Everything listens on 127.0.0.1.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import { EventBridgeStandIn } from './eventbridge/stand-in';
import { endpointTarget, FaultProxy } from '../faults/proxy';
import { loadIamSimulator } from './iam/evaluator';
import { IamGateway } from './iam/gateway';
import { LambdaInvokeStandIn } from './lambda/invoke-stand-in';
import { LOCAL_ACCOUNT, LOCAL_AWS, LOCAL_REGION, OPERATOR_ACCESS_KEY } from './local-aws';
import { createLocalSnsAuthority, LocalSnsAuthority, LocalSnsHost, startLocalSnsHost } from './sns/stand-in';
import { SecretsManagerStandIn } from './secretsmanager/stand-in';

export interface LocalServicesOptions {
  /** Keep DynamoDB data in this folder across restarts. */
  readonly dataDir?: string;
  /**
   * Judge every function's AWS call by its role's policy (with `@cloud-copilot/iam-simulate`; `true`
   * fails when it is not installed).
   * @default true where the simulator is installed; elsewhere calls are not judged, and progress says so
   */
  readonly enforceIam?: boolean;
  /** Progress lines while the emulators start. */
  readonly progress?: (line: string) => void;
}

/** Where the services answer. */
export interface ServiceEndpoints {
  readonly dynamodb: string;
  readonly sqs: string;
  readonly s3: string;
  readonly secretsManager: string;
  readonly eventBridge: string;
  readonly lambda: string;
  /** The SNS stand-in's HTTPS origin: SNS's host of every topic, for its certificate and confirmations. */
  readonly sns: string;
}

/**
 * The SNS stand-in of one run: its authority (a CA made at start, the signing certificate it
 * issues) and its HTTPS host. A function trusts the host by its CA file (`NODE_EXTRA_CA_CERTS`).
 */
export interface LocalSns {
  readonly authority: LocalSnsAuthority;
  readonly host: LocalSnsHost;
  /** A file holding the CA certificate (PEM). */
  readonly caFile: string;
  /** The signing certificate's private key (PKCS#8 PEM): what a simulated SNS signs messages with. */
  readonly signingKeyPem: string;
}

export interface LocalServices {
  /** As operators reach them (provisioning, tests, the ops CLI): not behind the gateway or the fault proxies. */
  readonly endpoints: ServiceEndpoints;
  /** As functions reach them: through the fault proxies and the IAM gateway. */
  readonly functionEndpoints: ServiceEndpoints;
  readonly clients: { readonly dynamodb: DynamoDBClient; readonly sqs: SQSClient; readonly s3: S3Client; readonly secrets: SecretsManagerClient };
  readonly secrets: SecretsManagerStandIn;
  readonly eventBridge: EventBridgeStandIn;
  readonly lambda: LambdaInvokeStandIn;
  readonly sns: LocalSns;
  /** Absent with `enforceIam: false`. */
  readonly iam?: { readonly gateway: IamGateway; readonly endpoint: string };
  readonly faults: LocalFaults;
  /** Stops whatever `onStop` registered (last first), then the services. */
  stop(): Promise<void>;
  onStop(stop: () => Promise<unknown> | unknown): void;
}

/** The fault proxies between the functions and the services they call. */
export interface LocalFaults {
  /** In front of DynamoDB; its indexes can lag (it reads the emulator directly). */
  readonly dynamodb: FaultProxy;
  /** In front of SQS, and of S3 (fauxqs serves both on one port). */
  readonly sqs: FaultProxy;
  readonly eventBridge: FaultProxy;
}

export async function startLocalServices(options: LocalServicesOptions = {}): Promise<LocalServices> {
  const stops: Array<() => Promise<unknown> | unknown> = [];
  const stop = async () => {
    for (const step of stops.splice(0).reverse()) await Promise.resolve(step()).catch(() => undefined);
  };
  // The SNS stand-in's keys are made while the emulators start (RSA key generation takes a while).
  const snsAuthority = createLocalSnsAuthority();
  // Awaited below; should a service before it fail, its own failure must not go unhandled.
  snsAuthority.catch(() => undefined);
  try {
    options.progress?.('starting the emulators (DynamoDB, SQS, S3)…');
    const emulatorsModule: typeof import('./emulators.mjs') = await import('./emulators.mjs' as string);
    const emulators = await emulatorsModule.startEmulators({ dataDir: options.dataDir });
    stops.push(() => emulators.stop());

    options.progress?.('starting the stand-ins (Secrets Manager, EventBridge, Lambda, SNS)…');
    const secrets = new SecretsManagerStandIn();
    const secretsManager = await secrets.start();
    stops.push(() => secrets.stop());
    const eventBridge = new EventBridgeStandIn();
    const eventBridgeEndpoint = await eventBridge.start();
    stops.push(() => eventBridge.stop());
    // Secrets Manager reports a failed rotation on the default bus, where rules can match it.
    secrets.onServiceEvent((event) => eventBridge.putServiceEvent(event));
    const lambda = new LambdaInvokeStandIn();
    const lambdaEndpoint = await lambda.start();
    stops.push(() => lambda.stop());
    const { sns, stop: stopSns } = await startLocalSns(await snsAuthority);
    stops.push(stopSns);
    const endpoints: ServiceEndpoints = {
      dynamodb: emulators.dynamodbEndpoint,
      sqs: emulators.sqsEndpoint,
      s3: emulators.s3Endpoint,
      secretsManager,
      eventBridge: eventBridgeEndpoint,
      lambda: lambdaEndpoint,
      sns: sns.host.origin,
    };

    const enforceIam = options.enforceIam ?? iamSimulatorInstalled(options.progress);
    const gateway = enforceIam
      ? new IamGateway({
          upstreams: {
            dynamodb: endpoints.dynamodb,
            sqs: endpoints.sqs,
            s3: endpoints.s3,
            secretsmanager: endpoints.secretsManager,
            events: endpoints.eventBridge,
            lambda: endpoints.lambda,
          },
          account: LOCAL_ACCOUNT,
          region: LOCAL_REGION,
          secrets,
          operatorKeys: [OPERATOR_ACCESS_KEY],
        })
      : undefined;
    const gatewayEndpoint = await gateway?.start();
    if (gateway) stops.push(() => gateway.stop());
    const faults: LocalFaults = {
      dynamodb: new FaultProxy(endpointTarget(gatewayEndpoint ?? endpoints.dynamodb), { dynamodbEndpoint: endpoints.dynamodb }),
      sqs: new FaultProxy(endpointTarget(gatewayEndpoint ?? endpoints.sqs)),
      eventBridge: new FaultProxy(endpointTarget(gatewayEndpoint ?? endpoints.eventBridge)),
    };
    const [proxiedDynamodb, proxiedSqs, proxiedEventBridge] = await Promise.all([faults.dynamodb.start(), faults.sqs.start(), faults.eventBridge.start()]);
    stops.push(...Object.values(faults).map((proxy) => () => proxy.stop()));
    const functionEndpoints: ServiceEndpoints = {
      dynamodb: proxiedDynamodb,
      sqs: proxiedSqs,
      // fauxqs serves S3 on its SQS port: S3 goes through the same proxy.
      s3: proxiedSqs,
      secretsManager: gatewayEndpoint ?? endpoints.secretsManager,
      eventBridge: proxiedEventBridge,
      lambda: gatewayEndpoint ?? endpoints.lambda,
      // SNS serves its certificates and confirmations to anyone, unsigned: no IAM in between.
      sns: endpoints.sns,
    };

    const clients = {
      dynamodb: new DynamoDBClient({ endpoint: endpoints.dynamodb, ...LOCAL_AWS }),
      sqs: new SQSClient({ endpoint: endpoints.sqs, ...LOCAL_AWS, useQueueUrlAsEndpoint: false }),
      s3: new S3Client({ endpoint: endpoints.s3, ...LOCAL_AWS, forcePathStyle: true }),
      secrets: new SecretsManagerClient({ endpoint: endpoints.secretsManager, ...LOCAL_AWS }),
    };
    stops.push(() => Object.values(clients).forEach((client) => client.destroy()));
    return {
      endpoints,
      functionEndpoints,
      clients,
      secrets,
      eventBridge,
      lambda,
      sns,
      ...(gateway ? { iam: { gateway, endpoint: gatewayEndpoint! } } : {}),
      faults,
      stop,
      onStop: (step) => stops.push(step),
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Starts the SNS stand-in's host and writes its CA where the functions' processes read it. */
async function startLocalSns(authority: LocalSnsAuthority): Promise<{ readonly sns: LocalSns; stop(): Promise<void> }> {
  const host = await startLocalSnsHost(authority);
  const folder = mkdtempSync(join(tmpdir(), 'webhook-inbox-local-sns-'));
  const caFile = join(folder, 'ca.pem');
  writeFileSync(caFile, authority.caPem);
  const signingKeyPem = authority.signingKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  return {
    sns: { authority, host, caFile, signingKeyPem },
    stop: async () => {
      await host.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** Whether the IAM simulator can be loaded; when it cannot, says that the functions' calls go unjudged. */
function iamSimulatorInstalled(progress: ((line: string) => void) | undefined): boolean {
  if (loadIamSimulator()) return true;
  progress?.(
    "warning: IAM is not enforced: @cloud-copilot/iam-simulate is not installed, so the functions' AWS calls are not judged against their roles' policies (npm install --save-dev @cloud-copilot/iam-simulate to judge them)",
  );
  return false;
}
