import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SecretCache, SecretsManagerReader, SecretVersion, SecretVersionReader } from '../../../lambda/shared/secrets';
import { Clock, newSigningSecret, SecretsFixture } from '../../support/inbox-fixture';

const TTL_MS = 300_000;
const MIN_REFRESH_MS = 30_000;

const secrets = new SecretsFixture();
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

function cacheOver(reader: SecretVersionReader, clock: Clock): SecretCache {
  return new SecretCache(reader, { ttlMs: TTL_MS, minRefreshIntervalMs: MIN_REFRESH_MS }, clock.now);
}

describe('SecretsManagerReader', () => {
  test('reads AWSCURRENT, and the new value after a rotation', async () => {
    const { id, value } = await secrets.create();
    const reader = new SecretsManagerReader(secrets.client);
    expect(await reader.read(id)).toEqual([{ stage: 'AWSCURRENT', value }]);

    const rotated = newSigningSecret();
    await secrets.rotate(id, rotated);
    expect(await reader.read(id)).toEqual([{ stage: 'AWSCURRENT', value: rotated }]);
  });

  test('a secret that does not exist is an error naming the cause, not the secret value', async () => {
    await expect(new SecretsManagerReader(secrets.client).read('no-such-secret')).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
  });
});

describe('SecretCache', () => {
  test('serves reads from the cache until the TTL runs out, then reads again', async () => {
    const { id, value } = await secrets.create();
    const reader = secrets.countingReader();
    const clock = new Clock();
    const cache = cacheOver(reader, clock);

    expect(await cache.versions(id)).toEqual([{ stage: 'AWSCURRENT', value }]);
    const rotated = newSigningSecret();
    await secrets.rotate(id, rotated);
    clock.advance(TTL_MS - 1);
    expect(await cache.versions(id)).toEqual([{ stage: 'AWSCURRENT', value }]);
    expect(reader.reads).toBe(1);

    clock.advance(1);
    expect(await cache.versions(id)).toEqual([{ stage: 'AWSCURRENT', value: rotated }]);
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

  test('a refresh after a miss is rate-limited per secret', async () => {
    const [a, b] = [await secrets.create(), await secrets.create()];
    const reader = secrets.countingReader();
    const clock = new Clock();
    const cache = cacheOver(reader, clock);
    await cache.versions(a.id);
    await cache.versions(b.id);

    clock.advance(MIN_REFRESH_MS - 1);
    expect(await cache.refreshAfterMiss(a.id)).toBeUndefined();
    expect(reader.reads).toBe(2);

    clock.advance(1);
    const rotated = newSigningSecret();
    await secrets.rotate(a.id, rotated);
    expect(await cache.refreshAfterMiss(a.id)).toEqual([{ stage: 'AWSCURRENT', value: rotated }]);
    expect(await cache.refreshAfterMiss(a.id)).toBeUndefined();
    expect(await cache.versions(a.id)).toEqual([{ stage: 'AWSCURRENT', value: rotated }]);
    // The other secret has its own budget.
    expect(await cache.refreshAfterMiss(b.id)).toEqual([{ stage: 'AWSCURRENT', value: b.value }]);
    expect(reader.reads).toBe(4);
  });

  test('when Secrets Manager becomes unreachable the last good versions keep serving', async () => {
    const { id, value } = await secrets.create();
    const reader = new SwitchableReader(new SecretsManagerReader(secrets.client));
    const clock = new Clock();
    const cache = cacheOver(reader, clock);
    await cache.versions(id);

    reader.reachable = false;
    clock.advance(TTL_MS);
    expect(await cache.versions(id)).toEqual([{ stage: 'AWSCURRENT', value }]);
    clock.advance(MIN_REFRESH_MS);
    expect(await cache.refreshAfterMiss(id)).toEqual([{ stage: 'AWSCURRENT', value }]);
    reader.destroy();
  });

  test('with nothing cached, an unreachable Secrets Manager is an error; the next call tries again', async () => {
    const { id, value } = await secrets.create();
    const reader = new SwitchableReader(new SecretsManagerReader(secrets.client));
    const cache = cacheOver(reader, new Clock());

    reader.reachable = false;
    await expect(cache.versions(id)).rejects.toThrow();
    reader.reachable = true;
    expect(await cache.versions(id)).toEqual([{ stage: 'AWSCURRENT', value }]);
    reader.destroy();
  });
});
