import { PutSecretValueCommand, SecretsManagerClient, UpdateSecretVersionStageCommand } from '@aws-sdk/client-secrets-manager';
import { Defaults } from '../../../../lib/contract';
import { SecretCache, SecretsManagerReader, SecretVersion, SecretVersionReader, usableVersions } from '../../../../lambda/shared/signatures/secrets';
import { Clock, newSigningSecret, SecretsFixture } from '../../../support/inbox-fixture';

const TTL_MS = 300_000;
const MIN_REFRESH_MS = 30_000;

/** The stand-in stamps versions' CreatedDate with this clock. */
const standInClock = new Clock();
const secrets = new SecretsFixture(standInClock.now);
beforeAll(() => secrets.start());
afterAll(() => secrets.stop());

/** Real readers both: one to the stand-in, one to a Secrets Manager that cannot be reached. */
class SwitchableReader implements SecretVersionReader {
  reachable = true;
  private readonly down = new SecretsManagerClient({ endpoint: 'http://127.0.0.1:9', maxAttempts: 1 });

  constructor(private readonly up: SecretVersionReader) {}

  read(secretId: string): Promise<SecretVersion[]> {
    return this.reachable ? this.up.read(secretId) : new SecretsManagerReader(this.down).read(secretId);
  }

  destroy(): void {
    this.down.destroy();
  }
}

/** Stage and value only: what the cache tests are about. */
const staged = (versions: readonly SecretVersion[] | undefined) => versions?.map(({ stage, value }) => ({ stage, value }));

function cacheOver(reader: SecretVersionReader, clock: Clock): SecretCache {
  return new SecretCache(reader, { ttlMs: TTL_MS, minRefreshIntervalMs: MIN_REFRESH_MS }, clock.now);
}

describe('SecretsManagerReader', () => {
  const reader = () => new SecretsManagerReader(secrets.client);

  test('reads AWSCURRENT with its version id and creation time', async () => {
    const { id, value } = await secrets.create();
    const stages = await secrets.stages(id);

    expect(await reader().read(id)).toEqual([{ stage: 'AWSCURRENT', value, versionId: stages.AWSCURRENT, createdAt: standInClock.now() }]);
  });

  test('reads every version that may sign: AWSCURRENT, AWSPENDING and AWSPREVIOUS, each with its own creation time', async () => {
    const { id, value: first } = await secrets.create();
    const created = standInClock.now();
    standInClock.advance(60_000);
    const second = newSigningSecret();
    await secrets.rotate(id, second);
    standInClock.advance(60_000);
    const third = newSigningSecret();
    await secrets.client.send(new PutSecretValueCommand({ SecretId: id, SecretString: third, VersionStages: ['AWSPENDING'] }));
    const stages = await secrets.stages(id);

    expect(await reader().read(id)).toEqual([
      { stage: 'AWSCURRENT', value: second, versionId: stages.AWSCURRENT, createdAt: created + 60_000 },
      { stage: 'AWSPENDING', value: third, versionId: stages.AWSPENDING, createdAt: created + 120_000 },
      { stage: 'AWSPREVIOUS', value: first, versionId: stages.AWSPREVIOUS, createdAt: created },
    ]);
  });

  test('a version holding AWSCURRENT and AWSPENDING (the manual procedure, before its cleanup) is listed under both stages', async () => {
    const { id } = await secrets.create();
    const next = newSigningSecret();
    const staged = await secrets.client.send(new PutSecretValueCommand({ SecretId: id, SecretString: next, VersionStages: ['AWSPENDING'] }));
    const old = (await secrets.stages(id)).AWSCURRENT;
    await secrets.client.send(
      new UpdateSecretVersionStageCommand({ SecretId: id, VersionStage: 'AWSCURRENT', MoveToVersionId: staged.VersionId, RemoveFromVersionId: old }),
    );

    const versions = await reader().read(id);

    expect(versions.map(({ stage, versionId, value }) => [stage, versionId, value])).toEqual([
      ['AWSCURRENT', staged.VersionId, next],
      ['AWSPENDING', staged.VersionId, next],
      ['AWSPREVIOUS', old, expect.any(String)],
    ]);
  });

  test('the empty AWSPENDING version of a rotation just started is left out', async () => {
    const { id, value } = await secrets.create();
    const token = await secrets.startRotation(id, 'arn:aws:lambda:us-east-1:000000000000:function:rotator');
    expect((await secrets.stages(id)).AWSPENDING).toBe(token);

    expect(staged(await reader().read(id))).toEqual([{ stage: 'AWSCURRENT', value }]);
  });

  test('a secret that does not exist is an error naming the cause, not the secret value', async () => {
    await expect(reader().read('no-such-secret')).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
  });
});

describe('usableVersions', () => {
  const GRACE_S = 3_600;
  const T0 = Date.UTC(2026, 8, 18, 10);
  const version = (stage: string, versionId: string, createdAt: number): SecretVersion => ({ stage, versionId, createdAt, value: `whsec_${versionId}` });
  const current = version('AWSCURRENT', 'v2', T0);
  const previous = version('AWSPREVIOUS', 'v1', T0 - 86_400_000);
  const pending = version('AWSPENDING', 'v3', T0 + 1_000);
  const ids = (versions: SecretVersion[]) => versions.map((v) => `${v.stage}:${v.versionId}`);

  test('AWSCURRENT and AWSPENDING always, AWSCURRENT first', () => {
    expect(ids(usableVersions([pending, current], T0 + 365 * 86_400_000, GRACE_S))).toEqual(['AWSCURRENT:v2', 'AWSPENDING:v3']);
  });

  test('AWSPENDING on the AWSCURRENT version is not listed twice', () => {
    expect(ids(usableVersions([current, { ...current, stage: 'AWSPENDING' }], T0, GRACE_S))).toEqual(['AWSCURRENT:v2']);
  });

  test('AWSPREVIOUS while now lies within the grace of the creation of AWSCURRENT, bounds included', () => {
    expect(ids(usableVersions([current, previous], T0, GRACE_S))).toEqual(['AWSCURRENT:v2', 'AWSPREVIOUS:v1']);
    expect(ids(usableVersions([current, pending, previous], T0 + GRACE_S * 1000, GRACE_S))).toEqual(['AWSCURRENT:v2', 'AWSPENDING:v3', 'AWSPREVIOUS:v1']);
    expect(ids(usableVersions([current, pending, previous], T0 + GRACE_S * 1000 + 1, GRACE_S))).toEqual(['AWSCURRENT:v2', 'AWSPENDING:v3']);
  });

  test('the default grace is a day; a grace of zero drops AWSPREVIOUS as soon as the clock passes the creation', () => {
    expect(Defaults.PREVIOUS_SECRET_GRACE_SECONDS).toBe(86_400);
    expect(ids(usableVersions([current, previous], T0 + 86_400_000, Defaults.PREVIOUS_SECRET_GRACE_SECONDS))).toContain('AWSPREVIOUS:v1');
    expect(ids(usableVersions([current, previous], T0 + 1, 0))).toEqual(['AWSCURRENT:v2']);
  });

  test('without AWSCURRENT nothing is usable', () => {
    expect(usableVersions([pending, previous], T0, GRACE_S)).toEqual([]);
  });
});

describe('SecretCache', () => {
  test('serves reads from the cache until the TTL runs out, then reads again', async () => {
    const { id, value } = await secrets.create();
    const reader = secrets.countingReader();
    const clock = new Clock();
    const cache = cacheOver(reader, clock);

    expect(staged(await cache.versions(id))).toEqual([{ stage: 'AWSCURRENT', value }]);
    const rotated = newSigningSecret();
    await secrets.rotate(id, rotated);
    clock.advance(TTL_MS - 1);
    expect(staged(await cache.versions(id))).toEqual([{ stage: 'AWSCURRENT', value }]);
    expect(reader.reads).toBe(1);

    clock.advance(1);
    expect(staged(await cache.versions(id))).toEqual([
      { stage: 'AWSCURRENT', value: rotated },
      { stage: 'AWSPREVIOUS', value },
    ]);
    expect(reader.reads).toBe(2);
  });

  test('concurrent reads of a cold cache share one request', async () => {
    const { id } = await secrets.create();
    const reader = secrets.countingReader();
    const cache = cacheOver(reader, new Clock());

    const all = await Promise.all(Array.from({ length: 20 }, () => cache.versions(id)));

    expect(new Set(all.map((versions) => versions[0].value)).size).toBe(1);
    expect(reader.reads).toBe(1);
  });

  test('a refresh after a miss is rate-limited per secret, from the last refresh a miss forced, never from a read for the TTL', async () => {
    const [a, b] = [await secrets.create(), await secrets.create()];
    const reader = secrets.countingReader();
    const clock = new Clock();
    const cache = cacheOver(reader, clock);
    await cache.versions(a.id);
    await cache.versions(b.id);

    // A version staged right after the cache read: the first miss reads again at once.
    clock.advance(1);
    const rotated = newSigningSecret();
    await secrets.rotate(a.id, rotated);
    const afterRotation = [
      { stage: 'AWSCURRENT', value: rotated },
      { stage: 'AWSPREVIOUS', value: a.value },
    ];
    expect(staged(await cache.refreshAfterMiss(a.id))).toEqual(afterRotation);
    expect(reader.reads).toBe(3);

    // Further misses wait for the interval, counted from that forced read.
    clock.advance(MIN_REFRESH_MS - 1);
    expect(await cache.refreshAfterMiss(a.id)).toBeUndefined();
    expect(reader.reads).toBe(3);
    clock.advance(1);
    expect(staged(await cache.refreshAfterMiss(a.id))).toEqual(afterRotation);
    expect(await cache.refreshAfterMiss(a.id)).toBeUndefined();
    expect(staged(await cache.versions(a.id))).toEqual(afterRotation);
    // The other secret has its own budget.
    expect(staged(await cache.refreshAfterMiss(b.id))).toEqual([{ stage: 'AWSCURRENT', value: b.value }]);
    expect(reader.reads).toBe(5);
  });

  test('when Secrets Manager becomes unreachable the last good versions keep serving', async () => {
    const { id, value } = await secrets.create();
    const reader = new SwitchableReader(new SecretsManagerReader(secrets.client));
    const clock = new Clock();
    const cache = cacheOver(reader, clock);
    await cache.versions(id);

    reader.reachable = false;
    clock.advance(TTL_MS);
    expect(staged(await cache.versions(id))).toEqual([{ stage: 'AWSCURRENT', value }]);
    clock.advance(MIN_REFRESH_MS);
    expect(staged(await cache.refreshAfterMiss(id))).toEqual([{ stage: 'AWSCURRENT', value }]);
    reader.destroy();
  });

  test('with nothing cached, an unreachable Secrets Manager is an error; the next call tries again', async () => {
    const { id, value } = await secrets.create();
    const reader = new SwitchableReader(new SecretsManagerReader(secrets.client));
    const cache = cacheOver(reader, new Clock());

    reader.reachable = false;
    await expect(cache.versions(id)).rejects.toThrow();
    reader.reachable = true;
    expect(staged(await cache.versions(id))).toEqual([{ stage: 'AWSCURRENT', value }]);
    reader.destroy();
  });
});
