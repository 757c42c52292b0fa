import { randomBytes as cryptoRandomBytes } from 'node:crypto';
import {
  DescribeSecretCommand,
  DescribeSecretCommandOutput,
  GetSecretValueCommand,
  PutSecretValueCommand,
  SecretsManagerClient,
  UpdateSecretVersionStageCommand,
} from '@aws-sdk/client-secrets-manager';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import type { SecretsManagerRotationEvent } from 'aws-lambda';
import { Env, isRotatedSecretFormat, ROTATED_SECRET_FORMATS, RotatedSecretConfig, SecretFormat } from '../../lib/contract';
import { requiredEnv } from '../shared/runtime/config';
import { ConfigurationError, errorName, functionErrorType, SafeError, safeErrorFields } from '../shared/runtime/errors';
import { SecretStage } from '../shared/signatures/secrets';
import { decodeStandardWebhooksSecret } from '../shared/signatures/standard-webhooks';
import { Telemetry } from '../shared/runtime/telemetry';

/** What the register function receives in the setSecret step (JSON). */
export interface SecretRegistration {
  readonly providerName: string;
  /** The secret's ARN, as the rotation event names it. */
  readonly secretId: string;
  /** The version being rotated in (the rotation's ClientRequestToken). */
  readonly versionId: string;
  /** The new signing secret. */
  readonly secret: string;
}

/** Pushes a new secret to the provider; throws when the provider did not take it. */
export interface SecretRegistrar {
  register(functionArn: string, registration: SecretRegistration): Promise<void>;
}

/** A failed rotation step; the message names what is wrong, never a secret value. */
export class RotationError extends SafeError {
  constructor(message: string) {
    super(message);
    this.name = 'RotationError';
  }
}

/**
 * Registers through a Lambda function invoked synchronously (RequestResponse). A function error
 * (`FunctionError` set, the function threw) fails the step; only the error type is reported,
 * because the function's message could echo the secret it was given.
 */
export class LambdaRegistrar implements SecretRegistrar {
  constructor(private readonly client: LambdaClient) {}

  async register(functionArn: string, registration: SecretRegistration): Promise<void> {
    const out = await this.client.send(
      new InvokeCommand({
        FunctionName: functionArn,
        InvocationType: 'RequestResponse',
        Payload: Buffer.from(JSON.stringify(registration), 'utf8'),
      }),
    );
    if (out.FunctionError) {
      throw new RotationError(`the register function failed (${out.FunctionError}: ${functionErrorType(out.Payload)})`);
    }
  }
}

export interface RotatorDependencies {
  readonly secretsManager: SecretsManagerClient;
  readonly registrar: SecretRegistrar;
  /** The secrets this function rotates (everything else is refused). */
  readonly rotated: readonly RotatedSecretConfig[];
  readonly telemetry: Telemetry;
  /** Random bytes for new secrets (node:crypto's CSPRNG). */
  readonly randomBytes?: (size: number) => Buffer;
}

type Step = SecretsManagerRotationEvent['Step'];
const STEPS: readonly string[] = ['createSecret', 'setSecret', 'testSecret', 'finishSecret'] satisfies Step[];
const SECRET_BYTES = 32;
const WHSEC_PREFIX = 'whsec_';
const TEXT_SECRET = /^[0-9a-f]{64}$/;

/** A new signing secret of `format`. */
export function generateSecret(format: RotatedSecretConfig['format'], randomBytes: (size: number) => Buffer = cryptoRandomBytes): string {
  const bytes = randomBytes(SECRET_BYTES);
  if (bytes.length !== SECRET_BYTES) throw new RotationError('the random source returned too few bytes');
  return format === SecretFormat.WHSEC ? `${WHSEC_PREFIX}${bytes.toString('base64')}` : bytes.toString('hex');
}

/** Whether `value` is a usable secret of `format` (Standard Webhooks allows 24 to 64 key bytes). */
export function isValidSecret(format: RotatedSecretConfig['format'], value: string): boolean {
  if (format === SecretFormat.TEXT) return TEXT_SECRET.test(value);
  if (!value.startsWith(WHSEC_PREFIX)) return false;
  try {
    const key = decodeStandardWebhooksSecret(value);
    return key.length >= 24 && key.length <= 64;
  } catch {
    return false;
  }
}

/**
 * The rotation function: the four Secrets Manager rotation steps, the way AWS's rotation
 * templates implement them. Every step is idempotent and safe to repeat (Secrets Manager
 * retries failed steps): createSecret puts a value only when the version has none, setSecret
 * registers the same value again, testSecret only reads, finishSecret moves labels only when
 * they are not yet where they belong.
 */
export function createRotator(deps: RotatorDependencies) {
  const randomBytes = deps.randomBytes ?? cryptoRandomBytes;
  const sm = deps.secretsManager;

  async function pendingValue(secretId: string, token: string): Promise<string> {
    const out = await sm.send(new GetSecretValueCommand({ SecretId: secretId, VersionId: token, VersionStage: SecretStage.PENDING }));
    if (out.SecretString === undefined) throw new RotationError(`version ${token} has no string value`);
    return out.SecretString;
  }

  async function removePending(secretId: string, token: string): Promise<string> {
    await sm.send(new UpdateSecretVersionStageCommand({ SecretId: secretId, VersionStage: SecretStage.PENDING, RemoveFromVersionId: token }));
    return 'pending-removed';
  }

  type StepHandler = (secretId: string, token: string, config: RotatedSecretConfig, metadata: DescribeSecretCommandOutput) => Promise<string>;

  const stepHandlers: Record<Step, StepHandler> = {
    /** Puts a new value under the token, unless the version has one already. */
    async createSecret(secretId, token, config) {
      // The current secret must exist.
      await sm.send(new GetSecretValueCommand({ SecretId: secretId, VersionStage: SecretStage.CURRENT }));
      try {
        await sm.send(new GetSecretValueCommand({ SecretId: secretId, VersionId: token, VersionStage: SecretStage.PENDING }));
        return 'exists';
      } catch (error) {
        if (errorName(error) !== 'ResourceNotFoundException') throw error;
      }
      await sm.send(
        new PutSecretValueCommand({
          SecretId: secretId,
          ClientRequestToken: token,
          SecretString: generateSecret(config.format, randomBytes),
          VersionStages: [SecretStage.PENDING],
        }),
      );
      return 'created';
    },

    /** Hands the pending secret to the provider's register function, when one is configured. */
    async setSecret(secretId, token, config) {
      if (!config.registerFunctionArn) return 'no-register-function';
      const secret = await pendingValue(secretId, token);
      await deps.registrar.register(config.registerFunctionArn, { providerName: config.providerName, secretId, versionId: token, secret });
      return 'registered';
    },

    /**
     * Checks that the pending value is a usable secret of the configured format. A deploy that does
     * not rotate has Secrets Manager test the function with this step alone, on a copy of the
     * current value staged AWSPENDING: nothing is promoted then, and the copy passes whatever its
     * format (a placeholder, or a secret the provider issued), while a rotation's own value, new and
     * random, never equals the current one.
     */
    async testSecret(secretId, token, config) {
      const pending = await pendingValue(secretId, token);
      const current = await sm.send(new GetSecretValueCommand({ SecretId: secretId, VersionStage: SecretStage.CURRENT }));
      if (pending === current.SecretString) return 'configuration-tested';
      if (!isValidSecret(config.format, pending)) throw new RotationError(`the pending value is not a valid ${config.format} secret`);
      return 'valid';
    },

    /** Makes the token version AWSCURRENT (the old one becomes AWSPREVIOUS) and takes AWSPENDING off it. */
    async finishSecret(secretId, token, _config, metadata) {
      const current = Object.entries(metadata.VersionIdsToStages ?? {}).find(([, stages]) => stages.includes(SecretStage.CURRENT))?.[0];
      await sm.send(
        new UpdateSecretVersionStageCommand({ SecretId: secretId, VersionStage: SecretStage.CURRENT, MoveToVersionId: token, RemoveFromVersionId: current }),
      );
      await removePending(secretId, token);
      return 'promoted';
    },
  };

  return async (event: SecretsManagerRotationEvent): Promise<void> => {
    const { SecretId: secretId, ClientRequestToken: token, Step: step } = event;
    let provider: string | undefined;
    let outcome: string;
    try {
      if (!STEPS.includes(step)) throw new RotationError(`unknown rotation step "${String(step)}"`);
      // Decided from the event alone: the role may read only the secrets it rotates.
      const config = configFor(deps.rotated, secretId);
      if (!config) throw new RotationError('the secret is not one this function rotates');
      provider = config.providerName;
      // The secret and the token must be in the state a rotation leaves them in.
      const metadata = await sm.send(new DescribeSecretCommand({ SecretId: secretId }));
      if (!metadata.RotationEnabled) throw new RotationError('rotation is not enabled for the secret');
      const stages = metadata.VersionIdsToStages ?? {};
      const tokenStages = stages[token];
      if (!tokenStages) throw new RotationError(`version ${token} has no stage for rotation of the secret`);
      if (tokenStages.includes(SecretStage.CURRENT)) {
        // Done already. A finishSecret repeated after a crash between its two label moves ends the cleanup.
        outcome = step === 'finishSecret' && tokenStages.includes(SecretStage.PENDING) ? await removePending(secretId, token) : 'already-current';
      } else if (!tokenStages.includes(SecretStage.PENDING)) {
        throw new RotationError(`version ${token} is not staged AWSPENDING for rotation of the secret`);
      } else {
        outcome = await stepHandlers[step](secretId, token, config, metadata);
      }
    } catch (error) {
      deps.telemetry.log('ERROR', 'rotation', { step, provider, secretArn: secretId, versionId: token, outcome: 'failed', ...safeErrorFields(error) });
      throw error;
    }
    deps.telemetry.log('INFO', 'rotation', { step, provider, secretArn: secretId, versionId: token, outcome });
  };
}

/**
 * The configuration of the secret a rotation event names. Secrets Manager passes the full ARN
 * (`…:secret:<name>-<6 random characters>`); the construct may know the secret by its full ARN, a
 * partial ARN (no random suffix) or its name, and each of those can be read off the full ARN.
 */
function configFor(rotated: readonly RotatedSecretConfig[], eventSecretId: string): RotatedSecretConfig | undefined {
  const partialArn = /^arn:[^:]+:secretsmanager:[^:]*:[^:]*:secret:.+-[A-Za-z0-9]{6}$/.test(eventSecretId) ? eventSecretId.slice(0, -7) : undefined;
  const name = partialArn?.slice(partialArn.indexOf(':secret:') + ':secret:'.length);
  return rotated.find(
    (config) => config.secretId === eventSecretId || (partialArn !== undefined && (config.secretId === partialArn || config.secretId === name)),
  );
}

/** Parses and validates the rotated secrets the construct serialized into the environment. */
export function rotatedSecretsFromEnv(env: Record<string, string | undefined>): RotatedSecretConfig[] {
  const raw = requiredEnv(env, Env.ROTATED_SECRETS);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigurationError(`environment variable ${Env.ROTATED_SECRETS} is not valid JSON`);
  }
  if (!Array.isArray(parsed) || parsed.length === 0) {
    throw new ConfigurationError(`environment variable ${Env.ROTATED_SECRETS} must be a non-empty JSON array`);
  }
  return parsed.map((entry, index) => {
    const c = (entry ?? {}) as Partial<RotatedSecretConfig>;
    const where = `${Env.ROTATED_SECRETS}[${index}]`;
    if (typeof c.secretId !== 'string' || c.secretId === '') throw new ConfigurationError(`${where}.secretId is missing`);
    if (typeof c.providerName !== 'string' || c.providerName === '') throw new ConfigurationError(`${where}.providerName is missing`);
    if (typeof c.format !== 'string' || !isRotatedSecretFormat(c.format)) {
      throw new ConfigurationError(`${where}.format must be one of ${ROTATED_SECRET_FORMATS.join(', ')}`);
    }
    if (c.registerFunctionArn !== undefined && (typeof c.registerFunctionArn !== 'string' || c.registerFunctionArn === '')) {
      throw new ConfigurationError(`${where}.registerFunctionArn is invalid`);
    }
    return {
      secretId: c.secretId,
      providerName: c.providerName,
      format: c.format,
      ...(c.registerFunctionArn ? { registerFunctionArn: c.registerFunctionArn } : {}),
    };
  });
}
