import { DescribeSecretCommand, GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { Defaults, Env } from '../../../lib/contract';
import { integerEnv } from '../runtime/config';

/** The Secrets Manager staging labels of the versions that may sign deliveries. */
export const SecretStage = {
  CURRENT: 'AWSCURRENT',
  PENDING: 'AWSPENDING',
  PREVIOUS: 'AWSPREVIOUS',
} as const;

/** One version of a signing secret as stored, labelled by its Secrets Manager stage. */
export interface SecretVersion {
  readonly stage: string;
  readonly value: string;
  readonly versionId: string;
  /** When Secrets Manager created the version (its `CreatedDate`), in epoch milliseconds. */
  readonly createdAt: number;
}

/** Reads the versions of a secret that may sign deliveries. */
export interface SecretVersionReader {
  read(secretId: string): Promise<SecretVersion[]>;
}

const SIGNING_STAGES: readonly string[] = [SecretStage.CURRENT, SecretStage.PENDING, SecretStage.PREVIOUS];

/**
 * Reads every staged version that may sign: AWSCURRENT, AWSPENDING and AWSPREVIOUS, one entry
 * per stage (a version holding two stages appears twice; `usableVersions` decides). The stages
 * come from one DescribeSecret and each value is read by its version id, so the result is one
 * consistent snapshot even while a rotation moves labels. A pending or previous version without
 * a value (Secrets Manager stages an empty AWSPENDING version when a rotation starts) or one
 * that vanished meanwhile is left out; AWSCURRENT must be readable.
 */
export class SecretsManagerReader implements SecretVersionReader {
  constructor(private readonly client: SecretsManagerClient) {}

  async read(secretId: string): Promise<SecretVersion[]> {
    const described = await this.client.send(new DescribeSecretCommand({ SecretId: secretId }));
    const holders: [stage: string, versionId: string][] = [];
    for (const [versionId, stages] of Object.entries(described.VersionIdsToStages ?? {})) {
      for (const stage of stages) if (SIGNING_STAGES.includes(stage)) holders.push([stage, versionId]);
    }
    const currentId = holders.find(([stage]) => stage === SecretStage.CURRENT)?.[1];
    if (!currentId) throw new Error('signing secret has no AWSCURRENT version');

    const ids = [...new Set(holders.map(([, versionId]) => versionId))];
    const read = await Promise.all(ids.map((versionId) => this.readVersion(secretId, versionId, versionId === currentId)));
    const byId = new Map(ids.map((versionId, index) => [versionId, read[index]]));
    const versions: SecretVersion[] = [];
    for (const stage of SIGNING_STAGES) {
      for (const [held, versionId] of holders) {
        const version = held === stage ? byId.get(versionId) : undefined;
        if (version) versions.push({ stage, versionId, ...version });
      }
    }
    return versions;
  }

  private async readVersion(secretId: string, versionId: string, required: boolean): Promise<{ value: string; createdAt: number } | undefined> {
    try {
      const out = await this.client.send(new GetSecretValueCommand({ SecretId: secretId, VersionId: versionId }));
      if (out.SecretString === undefined) {
        if (required) throw new Error('signing secret has no string value');
        return undefined;
      }
      return { value: out.SecretString, createdAt: out.CreatedDate?.getTime() ?? 0 };
    } catch (error) {
      if (!required && (error as { name?: string }).name === 'ResourceNotFoundException') return undefined;
      throw error;
    }
  }
}

/**
 * The versions that may sign a delivery at `nowMs`, AWSCURRENT first: AWSCURRENT and AWSPENDING
 * always (AWSPENDING only when it is another version than AWSCURRENT), AWSPREVIOUS only while
 * `nowMs` lies within `previousGraceSeconds` of the creation of the AWSCURRENT version.
 *
 * Secrets Manager records when a version was created, not when it became AWSCURRENT, so the
 * grace runs from the creation of the current version. That is close to its promotion: the
 * rotation function creates the version (createSecret) and promotes it (finishSecret) seconds
 * later, and the manual procedure for providers that generate the secret themselves stages the
 * new value right before promoting it. A version staged long before its promotion shortens the
 * grace by that time; it never lengthens it.
 */
export function usableVersions(versions: readonly SecretVersion[], nowMs: number, previousGraceSeconds: number): SecretVersion[] {
  const current = versions.find((version) => version.stage === SecretStage.CURRENT);
  if (!current) return [];
  const usable = [current];
  const add = (version: SecretVersion | undefined) => {
    if (version && !usable.some((taken) => taken.versionId === version.versionId)) usable.push(version);
  };
  add(versions.find((version) => version.stage === SecretStage.PENDING));
  if (nowMs - current.createdAt <= previousGraceSeconds * 1000) add(versions.find((version) => version.stage === SecretStage.PREVIOUS));
  return usable;
}

export interface SecretCacheOptions {
  /** How long a read stays fresh. */
  readonly ttlMs: number;
  /**
   * The least time between two reads of one secret forced by signature misses. Only those
   * count: a read for the TTL just before a new version was staged never delays the miss read
   * that finds it.
   */
  readonly minRefreshIntervalMs: number;
}

interface Entry {
  versions?: SecretVersion[];
  fetchedAt: number;
  /** When a signature miss last forced a read. */
  missRefreshedAt?: number;
  inFlight?: Promise<SecretVersion[]>;
}

/**
 * Caches signing secrets with a bounded TTL. A signature miss may force one early refresh, at
 * most once per `minRefreshIntervalMs` per secret since the last refresh a miss forced, so a
 * flood of forged requests cannot hammer Secrets Manager, and a newly staged secret verifies
 * within that interval however recently the cache was read. When a refresh fails, the last good
 * versions keep serving.
 */
export class SecretCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly reader: SecretVersionReader,
    private readonly options: SecretCacheOptions,
    private readonly now: () => number = Date.now,
  ) {}

  /** The cached versions of a secret, read anew when the TTL has run out. */
  async versions(secretId: string): Promise<SecretVersion[]> {
    const entry = this.entries.get(secretId);
    if (entry?.versions && this.now() - entry.fetchedAt < this.options.ttlMs) return entry.versions;
    return this.fetch(secretId);
  }

  /** Reads a secret again after a signature miss; undefined when the rate limit says not yet. */
  async refreshAfterMiss(secretId: string): Promise<SecretVersion[] | undefined> {
    const entry = this.entries.get(secretId);
    if (entry?.missRefreshedAt !== undefined && this.now() - entry.missRefreshedAt < this.options.minRefreshIntervalMs) return undefined;
    const refreshing = this.fetch(secretId);
    this.entries.get(secretId)!.missRefreshedAt = this.now();
    return refreshing;
  }

  private fetch(secretId: string): Promise<SecretVersion[]> {
    const entry: Entry = this.entries.get(secretId) ?? { fetchedAt: 0 };
    this.entries.set(secretId, entry);
    entry.inFlight ??= this.reader
      .read(secretId)
      .then((versions) => {
        entry.versions = versions;
        return versions;
      })
      .catch((error: unknown) => {
        if (entry.versions) return entry.versions;
        throw error;
      })
      .finally(() => {
        entry.fetchedAt = this.now();
        entry.inFlight = undefined;
      });
    return entry.inFlight;
  }
}

/**
 * The least time between two signature-miss refreshes of one secret, in every handler: short
 * enough that a provider's first retry (Echonova's comes 5 s after the first attempt) finds a
 * secret staged meanwhile, long enough that forged requests cost at most one read per 2 s per
 * warm instance.
 */
export const MIN_MISS_REFRESH_MS = 2_000;

/** A cache of Secrets Manager reads with the TTL the construct configured. */
export function secretCacheFromEnv(
  env: Record<string, string | undefined>,
  client: SecretsManagerClient = new SecretsManagerClient({}),
  now: () => number = Date.now,
): SecretCache {
  return new SecretCache(
    new SecretsManagerReader(client),
    { ttlMs: integerEnv(env, Env.SECRET_CACHE_SECONDS, Defaults.SECRET_CACHE_SECONDS) * 1000, minRefreshIntervalMs: MIN_MISS_REFRESH_MS },
    now,
  );
}
