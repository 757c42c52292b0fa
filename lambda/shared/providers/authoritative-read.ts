import { AuthoritativeReadSettings, Defaults, ProviderRuntimeConfig, RESOURCE_ID_PLACEHOLDER } from '../../../lib/contract';
import { readResourceId } from './adapter';
import { ApiKeySource } from './api-key';
import { AuthoritativeReadError, errorName, MalformedDeliveryError } from '../runtime/errors';
import { SecretCache } from '../signatures/secrets';

/**
 * The authoritative read (docs/providers/standard-webhooks.md): a webhook says that something changed, not that the output
 * is still there. Before a delivery's result is exposed, the processor fetches the provider's
 * resource the delivery names (e.g. OpenAI's `response.completed` carries only `data.id`).
 *
 * - 2xx: `found`, with the resource's text; it travels in the effect.
 * - 404 or 410: `unavailable`: the resource is missing or expired. The row is settled with that
 *   outcome; nothing is retried and nothing is generated again (an operator decides).
 * - anything else (401, 429, 5xx, a timeout, a redirect): an AuthoritativeReadError, and the row
 *   is retried like any processing failure.
 */
export type ResourceRead = { readonly kind: 'found'; readonly text: string } | { readonly kind: 'unavailable'; readonly status: number };

export interface ResourceReader {
  read(body: Buffer): Promise<ResourceRead>;
}

export interface HttpResourceReaderOptions {
  readonly timeoutMs?: number;
  readonly maxBytes?: number;
}

const UNAVAILABLE_STATUSES: readonly number[] = [404, 410];

/**
 * GETs `urlTemplate` with the id from the body, authenticated by a Bearer key from Secrets Manager
 * (plain text or `{"apiKey": …}`, as for polling).
 */
export class HttpResourceReader implements ResourceReader {
  private readonly apiKeys: ApiKeySource;
  private readonly timeoutMs: number;
  private readonly maxBytes: number;

  constructor(
    private readonly settings: AuthoritativeReadSettings,
    secrets: SecretCache,
    options: HttpResourceReaderOptions = {},
  ) {
    this.apiKeys = new ApiKeySource(secrets, settings.apiKeySecretId);
    this.timeoutMs = options.timeoutMs ?? Defaults.AUTHORITATIVE_READ_TIMEOUT_SECONDS * 1000;
    this.maxBytes = options.maxBytes ?? Defaults.AUTHORITATIVE_READ_MAX_BYTES;
  }

  async read(body: Buffer): Promise<ResourceRead> {
    const url = this.settings.urlTemplate.replace(RESOURCE_ID_PLACEHOLDER, encodeURIComponent(resourceIdOf(body, this.settings.idJsonPath)));
    const apiKey = await this.apiKeys.key();
    let response: Response;
    try {
      response = await fetch(url, {
        headers: { authorization: `Bearer ${apiKey}`, accept: 'application/json' },
        // A redirect could carry the key elsewhere: refuse it (retried as a failure).
        redirect: 'error',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      // fetch's cause may name the URL (and so the id): only the name, as for every error not ours.
      throw new AuthoritativeReadError(`the provider could not be reached (${errorName(error)})`);
    }
    if (UNAVAILABLE_STATUSES.includes(response.status)) {
      await response.body?.cancel();
      return { kind: 'unavailable', status: response.status };
    }
    if (response.status < 200 || response.status > 299) {
      await response.body?.cancel();
      // A rejected key may have been rotated: read the secret again (rate-limited) for the retry.
      if (response.status === 401 || response.status === 403) await this.apiKeys.refreshed().catch(() => undefined);
      throw new AuthoritativeReadError(`the provider answered ${response.status}`);
    }
    return { kind: 'found', text: await this.text(response) };
  }

  /** The body as text, refusing more than `maxBytes`. */
  private async text(response: Response): Promise<string> {
    const declared = Number(response.headers.get('content-length') ?? 0);
    if (declared > this.maxBytes) {
      await response.body?.cancel();
      throw new AuthoritativeReadError(`the resource exceeds ${this.maxBytes} bytes`);
    }
    const chunks: Buffer[] = [];
    let bytes = 0;
    for await (const chunk of response.body ?? []) {
      bytes += (chunk as Uint8Array).byteLength;
      if (bytes > this.maxBytes) throw new AuthoritativeReadError(`the resource exceeds ${this.maxBytes} bytes`);
      chunks.push(Buffer.from(chunk as Uint8Array));
    }
    return Buffer.concat(chunks).toString('utf8');
  }
}

/** The resource id at `path` of a JSON body; the edge admitted only bodies that have one (`readResourceId`). */
function resourceIdOf(body: Buffer, path: string): string {
  const read = readResourceId(body, path);
  if (typeof read !== 'string') throw new MalformedDeliveryError(read.field, read.problem);
  return read;
}

/** One reader per provider that configures an authoritative read, by provider name. */
export function resourceReadersFor(
  providers: readonly ProviderRuntimeConfig[],
  secrets: SecretCache,
  options: HttpResourceReaderOptions = {},
): Map<string, ResourceReader> {
  return new Map(
    providers.flatMap((config) =>
      config.authoritativeRead ? [[config.name, new HttpResourceReader(config.authoritativeRead, secrets, options)] as const] : [],
    ),
  );
}
