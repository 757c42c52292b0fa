/**
 * A STAND-IN for AWS Secrets Manager, for the tests and the local twin only: no emulator of it
 * exists on npm or Debian. It speaks the real wire protocol (awsJson1_1 over HTTP), so the real
 * SDK client talks to it unchanged, and it keeps version stages the way Secrets Manager does.
 * It implements only the operations the handlers use, and keeps everything in memory.
 */
import { randomUUID } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

interface Version {
  readonly id: string;
  readonly value: string;
  stages: Set<string>;
  readonly createdAt: number;
}

interface Secret {
  readonly arn: string;
  readonly name: string;
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
  private server?: Server;

  /** Starts serving on 127.0.0.1 and returns the endpoint URL. */
  async start(port = 0): Promise<string> {
    this.server = createServer((req, res) => void this.serve(req, res));
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
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
      default:
        throw new StandInError('InvalidRequestException', `the stand-in does not implement ${operation}`);
    }
  }

  private find(input: Request): Secret {
    const id = String(input.SecretId ?? '');
    const secret = this.secrets.get(id) ?? [...this.secrets.values()].find((s) => s.arn === id);
    if (!secret) throw new StandInError('ResourceNotFoundException', "Secrets Manager can't find the specified secret.");
    return secret;
  }

  private createSecret(input: Request): unknown {
    const name = String(input.Name ?? '');
    if (!name) throw new StandInError('InvalidParameterException', 'Name is required');
    if (this.secrets.has(name)) throw new StandInError('ResourceExistsException', `the secret ${name} already exists`);
    const arn = `arn:aws:secretsmanager:us-east-1:000000000000:secret:${name}-${randomUUID().slice(0, 6)}`;
    const secret: Secret = { arn, name, versions: [] };
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
      VersionIdsToStages: Object.fromEntries(
        secret.versions.filter((v) => v.stages.size > 0).map((v) => [v.id, [...v.stages]]),
      ),
    };
  }

  private getSecretValue(input: Request): unknown {
    const secret = this.find(input);
    const stage = typeof input.VersionStage === 'string' ? input.VersionStage : input.VersionId ? undefined : 'AWSCURRENT';
    const version = secret.versions.find((v) => (stage ? v.stages.has(stage) : v.id === input.VersionId));
    if (!version) {
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
    const existing = secret.versions.find((v) => v.id === token);
    if (existing) {
      if (existing.value !== input.SecretString) {
        throw new StandInError('ResourceExistsException', 'a version with this token already exists with another value');
      }
    } else {
      this.addVersion(secret, token, String(input.SecretString ?? ''), stages);
    }
    return { ARN: secret.arn, Name: secret.name, VersionId: token, VersionStages: stages };
  }

  private updateSecretVersionStage(input: Request): unknown {
    const secret = this.find(input);
    const stage = String(input.VersionStage ?? '');
    const from = secret.versions.find((v) => v.id === input.RemoveFromVersionId);
    const to = secret.versions.find((v) => v.id === input.MoveToVersionId);
    const holder = secret.versions.find((v) => v.stages.has(stage));
    if (holder && holder !== from && to) {
      throw new StandInError('InvalidParameterException', `${stage} is attached to another version; name it in RemoveFromVersionId`);
    }
    from?.stages.delete(stage);
    if (to) this.moveStage(secret, to, stage);
    return { ARN: secret.arn, Name: secret.name };
  }

  private addVersion(secret: Secret, id: string, value: string, stages: string[]): void {
    const version: Version = { id, value, stages: new Set(), createdAt: Date.now() };
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
