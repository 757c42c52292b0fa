/**
 * A STAND-IN for AWS Secrets Manager, for the tests and the local twin only: no emulator of it
 * exists on npm or Debian. It speaks the real wire protocol (awsJson1_1 over HTTP), so the real
 * SDK client talks to it unchanged, and it keeps version stages the way Secrets Manager does.
 * It implements only the operations the handlers use, and keeps everything in memory.
 *
 * Rotation: RotateSecret turns rotation on and stages an empty AWSPENDING version named by the
 * request token, as Secrets Manager does; when an in-process function is attached for the
 * rotation Lambda's ARN (the stand-in's stand-in for Lambda), the four steps run against it
 * after the answer, as Secrets Manager runs them asynchronously. Otherwise a test drives them.
 * With `RotateImmediately: false` it only tests the function, as Secrets Manager does: a copy of
 * the current value staged AWSPENDING, the testSecret step alone, the label taken off again.
 * A failed rotation (or test) is reported as Secrets Manager reports it, a CloudTrail service
 * event (`RotationFailed`, `TestRotationFailed`) handed to the listeners `onServiceEvent` registered.
 */
import { randomUUID } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { LOCAL_ACCOUNT, LOCAL_REGION } from '../local-aws';
import { closeServer, listenOnLoopback } from '../loopback';

interface Version {
  readonly id: string;
  /** Absent for the empty AWSPENDING version a rotation starts with. */
  value?: string;
  stages: Set<string>;
  readonly createdAt: number;
}

/** The event Secrets Manager invokes a rotation function with, one per step. */
export interface RotationStepEvent {
  readonly SecretId: string;
  readonly ClientRequestToken: string;
  readonly Step: 'createSecret' | 'setSecret' | 'testSecret' | 'finishSecret';
}

export type RotationFunction = (event: RotationStepEvent) => Promise<unknown>;

/** How a rotation the stand-in drove ended: the step that failed, if any. */
export interface RotationOutcome {
  readonly secretArn: string;
  readonly token: string;
  /** A test of the rotation function (`RotateImmediately: false`), not a rotation. */
  readonly testOnly?: true;
  readonly failedStep?: RotationStepEvent['Step'];
  readonly error?: unknown;
}

/** An event Secrets Manager puts on the default bus itself, as EventBridge delivers it. */
export interface SecretsManagerServiceEvent {
  readonly source: 'aws.secretsmanager';
  readonly detailType: 'AWS Service Event via CloudTrail';
  /** The CloudTrail record: `eventName`, `errorMessage`, the secret's ARN in `additionalEventData.SecretId`. */
  readonly detail: Record<string, unknown>;
}

const ROTATION_STEPS: readonly RotationStepEvent['Step'][] = ['createSecret', 'setSecret', 'testSecret', 'finishSecret'];

interface Secret {
  readonly arn: string;
  readonly name: string;
  /** The KMS key it is encrypted with, as CreateSecret named it; absent: the AWS managed key `aws/secretsmanager`. */
  readonly kmsKeyId?: string;
  readonly versions: Version[];
  rotationLambdaArn?: string;
}

class StandInError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

type Request = Record<string, unknown>;

export class SecretsManagerStandIn {
  private readonly secrets = new Map<string, Secret>();
  private readonly rotationFunctions = new Map<string, RotationFunction>();
  private readonly rotations: Promise<RotationOutcome>[] = [];
  private readonly serviceEventListeners: ((event: SecretsManagerServiceEvent) => void)[] = [];
  private server?: Server;

  /** `now` stamps each version's CreatedDate (a test passes its controllable clock). */
  constructor(private readonly now: () => number = Date.now) {}

  /** Runs `fn` for the four steps of every rotation whose RotationLambdaARN is `lambdaArn`. */
  attachRotationFunction(lambdaArn: string, fn: RotationFunction): void {
    this.rotationFunctions.set(lambdaArn, fn);
  }

  /** Calls `listener` with every service event from now on (a failed rotation or test). */
  onServiceEvent(listener: (event: SecretsManagerServiceEvent) => void): void {
    this.serviceEventListeners.push(listener);
  }

  /** Waits for the rotations started so far to end; returns how each one ended. */
  rotationsSettled(): Promise<RotationOutcome[]> {
    return Promise.all(this.rotations);
  }

  /** Starts serving on 127.0.0.1 and returns the endpoint URL. */
  async start(port = 0): Promise<string> {
    this.server = createServer((req, res) => void this.serve(req, res));
    return listenOnLoopback(this.server, port);
  }

  async stop(): Promise<void> {
    await closeServer(this.server);
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const operation = String(req.headers['x-amz-target'] ?? '').replace(/^secretsmanager\./, '');
    try {
      const input = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Request;
      const output = this.dispatch(operation, input);
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify(output));
    } catch (error) {
      const type = error instanceof StandInError ? error.type : 'InternalServiceError';
      res
        .writeHead(400, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-errortype': type })
        .end(JSON.stringify({ __type: type, message: (error as Error).message }));
    }
  }

  private dispatch(operation: string, input: Request): unknown {
    switch (operation) {
      case 'CreateSecret':
        return this.createSecret(input);
      case 'DescribeSecret':
        return this.describeSecret(input);
      case 'GetSecretValue':
        return this.getSecretValue(input);
      case 'PutSecretValue':
        return this.putSecretValue(input);
      case 'UpdateSecretVersionStage':
        return this.updateSecretVersionStage(input);
      case 'RotateSecret':
        return this.rotateSecret(input);
      default:
        throw new StandInError('InvalidRequestException', `the stand-in does not implement ${operation}`);
    }
  }

  /** The ARN of a secret named by its name or ARN; undefined when there is none. */
  arnOf(secretId: string): string | undefined {
    return this.lookup(secretId)?.arn;
  }

  /** The KMS key a secret named by its name or ARN is encrypted with; undefined for the AWS managed key, or no such secret. */
  kmsKeyOf(secretId: string): string | undefined {
    return this.lookup(secretId)?.kmsKeyId;
  }

  /** By name, full ARN or partial ARN (the full one without its random suffix), as Secrets Manager finds secrets. */
  private lookup(id: string): Secret | undefined {
    return this.secrets.get(id) ?? [...this.secrets.values()].find((s) => s.arn === id || s.arn.slice(0, -7) === id);
  }

  private find(input: Request): Secret {
    const secret = this.lookup(String(input.SecretId ?? ''));
    if (!secret) throw new StandInError('ResourceNotFoundException', "Secrets Manager can't find the specified secret.");
    return secret;
  }

  private createSecret(input: Request): unknown {
    const name = String(input.Name ?? '');
    if (!name) throw new StandInError('InvalidParameterException', 'Name is required');
    if (this.secrets.has(name)) throw new StandInError('ResourceExistsException', `the secret ${name} already exists`);
    const arn = `arn:aws:secretsmanager:${LOCAL_REGION}:${LOCAL_ACCOUNT}:secret:${name}-${randomUUID().slice(0, 6)}`;
    const secret: Secret = { arn, name, versions: [], ...(typeof input.KmsKeyId === 'string' ? { kmsKeyId: input.KmsKeyId } : {}) };
    this.secrets.set(name, secret);
    if (typeof input.SecretString === 'string') {
      this.addVersion(secret, String(input.ClientRequestToken ?? randomUUID()), input.SecretString, ['AWSCURRENT']);
    }
    return { ARN: arn, Name: name, VersionId: secret.versions[0]?.id };
  }

  private describeSecret(input: Request): unknown {
    const secret = this.find(input);
    return {
      ARN: secret.arn,
      Name: secret.name,
      RotationEnabled: Boolean(secret.rotationLambdaArn),
      RotationLambdaARN: secret.rotationLambdaArn,
      KmsKeyId: secret.kmsKeyId,
      VersionIdsToStages: Object.fromEntries(secret.versions.filter((v) => v.stages.size > 0).map((v) => [v.id, [...v.stages]])),
    };
  }

  private getSecretValue(input: Request): unknown {
    const secret = this.find(input);
    // By id, by stage, or both (then the stage must be on that version); AWSCURRENT by default.
    const stage = typeof input.VersionStage === 'string' ? input.VersionStage : input.VersionId ? undefined : 'AWSCURRENT';
    const version = secret.versions.find((v) => (stage === undefined || v.stages.has(stage)) && (input.VersionId === undefined || v.id === input.VersionId));
    if (!version || version.value === undefined) {
      throw new StandInError('ResourceNotFoundException', "Secrets Manager can't find the specified secret value for the version.");
    }
    return {
      ARN: secret.arn,
      Name: secret.name,
      VersionId: version.id,
      SecretString: version.value,
      VersionStages: [...version.stages],
      CreatedDate: version.createdAt / 1000,
    };
  }

  private putSecretValue(input: Request): unknown {
    const secret = this.find(input);
    const token = String(input.ClientRequestToken ?? randomUUID());
    const stages = Array.isArray(input.VersionStages) ? input.VersionStages.map(String) : ['AWSCURRENT'];
    const value = String(input.SecretString ?? '');
    const existing = secret.versions.find((v) => v.id === token);
    if (existing && existing.value === undefined) {
      // The empty AWSPENDING version of a rotation in progress: the rotation function fills it.
      existing.value = value;
      for (const stage of stages) this.moveStage(secret, existing, stage);
    } else if (existing) {
      // The same token with the same value is a repeat and changes nothing.
      if (existing.value !== value) {
        throw new StandInError('ResourceExistsException', 'a version with this token already exists with another value');
      }
    } else {
      this.addVersion(secret, token, value, stages);
    }
    const version = secret.versions.find((v) => v.id === token)!;
    return { ARN: secret.arn, Name: secret.name, VersionId: token, VersionStages: [...version.stages] };
  }

  private updateSecretVersionStage(input: Request): unknown {
    const secret = this.find(input);
    const stage = String(input.VersionStage ?? '');
    const from = secret.versions.find((v) => v.id === input.RemoveFromVersionId);
    const to = secret.versions.find((v) => v.id === input.MoveToVersionId);
    if (input.RemoveFromVersionId !== undefined && !from?.stages.has(stage)) {
      throw new StandInError('InvalidParameterException', `${stage} is not attached to the version named in RemoveFromVersionId`);
    }
    if (input.MoveToVersionId !== undefined && !to) {
      throw new StandInError('ResourceNotFoundException', 'the version named in MoveToVersionId does not exist');
    }
    const holder = secret.versions.find((v) => v.stages.has(stage));
    if (holder && holder !== from && holder !== to && to) {
      throw new StandInError('InvalidParameterException', `${stage} is attached to another version; name it in RemoveFromVersionId`);
    }
    // Moving a label takes it off its holder (and moving AWSCURRENT puts AWSPREVIOUS there).
    if (to) this.moveStage(secret, to, stage);
    else from?.stages.delete(stage);
    return { ARN: secret.arn, Name: secret.name };
  }

  private rotateSecret(input: Request): unknown {
    const secret = this.find(input);
    const lambdaArn = typeof input.RotationLambdaARN === 'string' ? input.RotationLambdaARN : secret.rotationLambdaArn;
    if (!lambdaArn) throw new StandInError('InvalidRequestException', 'no rotation function is configured for the secret');
    const pending = secret.versions.find((v) => v.stages.has('AWSPENDING'));
    if (pending && !pending.stages.has('AWSCURRENT')) {
      throw new StandInError('InvalidRequestException', "A previous rotation isn't complete. That rotation will be reattempted.");
    }
    secret.rotationLambdaArn = lambdaArn;
    const token = String(input.ClientRequestToken ?? randomUUID());
    const fn = this.rotationFunctions.get(lambdaArn);
    if (input.RotateImmediately === false) {
      // The test's version holds a copy of the current value, and keeps no label once tested.
      const current = secret.versions.find((v) => v.stages.has('AWSCURRENT'));
      if (!secret.versions.some((v) => v.id === token)) this.addVersion(secret, token, current?.value, ['AWSPENDING']);
      const removeLabel = () => secret.versions.find((v) => v.id === token)?.stages.delete('AWSPENDING');
      if (fn) this.rotations.push(this.runSteps(fn, lambdaArn, secret.arn, token, ['testSecret'], true).finally(removeLabel));
      else removeLabel();
      return { ARN: secret.arn, Name: secret.name, VersionId: token };
    }
    if (!secret.versions.some((v) => v.id === token)) this.addVersion(secret, token, undefined, ['AWSPENDING']);
    if (fn) this.rotations.push(this.runSteps(fn, lambdaArn, secret.arn, token, ROTATION_STEPS, false));
    return { ARN: secret.arn, Name: secret.name, VersionId: token };
  }

  /** The steps in order, after the answer; a failed step ends the run there, and is reported. */
  private async runSteps(
    fn: RotationFunction,
    lambdaArn: string,
    secretArn: string,
    token: string,
    steps: readonly RotationStepEvent['Step'][],
    testOnly: boolean,
  ): Promise<RotationOutcome> {
    await new Promise((resolve) => setImmediate(resolve));
    const kind = testOnly ? { testOnly: true as const } : {};
    for (const step of steps) {
      try {
        await fn({ SecretId: secretArn, ClientRequestToken: token, Step: step });
      } catch (error) {
        this.report(testOnly ? 'TestRotationFailed' : 'RotationFailed', secretArn, `Error when executing lambda ${lambdaArn} during ${step} step`);
        return { secretArn, token, ...kind, failedStep: step, error };
      }
    }
    return { secretArn, token, ...kind };
  }

  /** A CloudTrail service event of Secrets Manager, in the shape CloudTrail records it. */
  private report(eventName: string, secretArn: string, errorMessage: string): void {
    const time = new Date(this.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const detail = {
      eventVersion: '1.08',
      userIdentity: { accountId: LOCAL_ACCOUNT, invokedBy: 'secretsmanager.amazonaws.com' },
      eventTime: time,
      eventSource: 'secretsmanager.amazonaws.com',
      eventName,
      awsRegion: LOCAL_REGION,
      sourceIPAddress: 'secretsmanager.amazonaws.com',
      userAgent: 'secretsmanager.amazonaws.com',
      errorMessage,
      requestParameters: null,
      responseElements: null,
      additionalEventData: { SecretId: secretArn },
      requestID: `Rotation-${secretArn}`,
      eventID: randomUUID(),
      readOnly: false,
      eventType: 'AwsServiceEvent',
      managementEvent: true,
      recipientAccountId: LOCAL_ACCOUNT,
      eventCategory: 'Management',
    };
    for (const listener of this.serviceEventListeners) {
      listener({ source: 'aws.secretsmanager', detailType: 'AWS Service Event via CloudTrail', detail });
    }
  }

  private addVersion(secret: Secret, id: string, value: string | undefined, stages: string[]): void {
    const version: Version = { id, value, stages: new Set(), createdAt: this.now() };
    secret.versions.push(version);
    for (const stage of stages) this.moveStage(secret, version, stage);
  }

  /** Labels are unique per secret; moving AWSCURRENT leaves AWSPREVIOUS on the version it left. */
  private moveStage(secret: Secret, to: Version, stage: string): void {
    for (const version of secret.versions) {
      if (version !== to && version.stages.delete(stage) && stage === 'AWSCURRENT') {
        for (const other of secret.versions) other.stages.delete('AWSPREVIOUS');
        version.stages.add('AWSPREVIOUS');
      }
    }
    to.stages.add(stage);
  }
}
