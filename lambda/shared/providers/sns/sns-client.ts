import { KeyObject, X509Certificate } from 'node:crypto';
import { get as httpsGet } from 'node:https';
import { Defaults } from '../../../../lib/contract';
import { errorName, SafeError } from '../../runtime/errors';

/** SNS could not be reached, or answered what no SNS answers: retried, as SNS retries the delivery. */
export class SnsRequestError extends SafeError {
  override readonly name = 'SnsRequestError';
}

/** The public keys of the certificates a request names (SNS's `SigningCertURL`), fetched once per URL. */
export interface SigningCertificates {
  /** The key of the certificate at `url`, valid at `nowMillis`; throws SnsRequestError when it cannot be had. */
  publicKey(url: string, nowMillis: number): Promise<KeyObject>;
}

/** Confirms a subscription by requesting the URL its confirmation message carries (SNS's `SubscribeURL`). */
export interface SubscriptionConfirmer {
  /** Throws SnsRequestError when SNS does not confirm. */
  confirm(url: string): Promise<void>;
}

interface CachedCertificate {
  readonly publicKey: KeyObject;
  readonly validFrom: number;
  readonly validTo: number;
}

export interface HttpsSnsClientOptions {
  readonly timeoutMs?: number;
  readonly maxCertificateBytes?: number;
  /** How long a URL that could not be fetched is refused from memory. @default Defaults.SNS_CERTIFICATE_FAILURE_CACHE_MS */
  readonly failureCacheMs?: number;
  /** The most certificate fetches started in a minute. @default Defaults.SNS_CERTIFICATE_FETCHES_PER_MINUTE */
  readonly fetchesPerMinute?: number;
  /**
   * The certificate authorities SNS's host must prove itself with (PEM).
   * @default - Node's root store (and NODE_EXTRA_CA_CERTS, as the local twin sets it)
   */
  readonly trustedAuthorities?: string[];
}

/**
 * SNS over HTTPS, as the verifier reaches it: the URLs come from a message the adapter has
 * checked (a certificate's name on an SNS origin of the topic's partition), TLS authenticates the
 * host, and no redirect is followed (it could lead anywhere). A certificate is cached for the life
 * of the environment: SNS publishes a new one under a new URL. What a sender can make it fetch is
 * bounded, since the sender is not yet authenticated: a URL that could not be fetched is refused
 * from memory for a few seconds, and at most so many fetches start in a minute.
 */
export class HttpsSnsClient implements SigningCertificates, SubscriptionConfirmer {
  /** Each URL's certificate, as much of it as a delivery needs: its key and its validity, in epoch ms. */
  private readonly certificates = new Map<string, Promise<CachedCertificate>>();
  /** URLs whose fetch failed, with when they may be fetched again and why they failed. */
  private readonly failures = new Map<string, { readonly until: number; readonly error: Error }>();
  /** The minute (epoch ms / 60,000) fetches are counted in, and how many started in it. */
  private fetchWindow = { minute: -1, started: 0 };
  private readonly timeoutMs: number;
  private readonly maxCertificateBytes: number;
  private readonly failureCacheMs: number;
  private readonly fetchesPerMinute: number;
  private readonly trustedAuthorities?: string[];

  constructor(options: HttpsSnsClientOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? Defaults.SNS_REQUEST_TIMEOUT_MS;
    this.maxCertificateBytes = options.maxCertificateBytes ?? Defaults.SNS_CERTIFICATE_MAX_BYTES;
    this.failureCacheMs = options.failureCacheMs ?? Defaults.SNS_CERTIFICATE_FAILURE_CACHE_MS;
    this.fetchesPerMinute = options.fetchesPerMinute ?? Defaults.SNS_CERTIFICATE_FETCHES_PER_MINUTE;
    this.trustedAuthorities = options.trustedAuthorities;
  }

  async publicKey(url: string, nowMillis: number): Promise<KeyObject> {
    let pending = this.certificates.get(url);
    if (!pending) {
      pending = this.startFetch(url, nowMillis);
      this.certificates.set(url, pending);
      // A failure is not kept here: the next delivery asks again (startFetch answers it from memory for a while).
      pending.catch(() => this.certificates.delete(url));
    }
    const certificate = await pending;
    if (nowMillis < certificate.validFrom || nowMillis > certificate.validTo) {
      this.certificates.delete(url);
      throw new SnsRequestError('the signing certificate is not valid now');
    }
    return certificate.publicKey;
  }

  async confirm(url: string): Promise<void> {
    // The answer is a short XML document; only its status matters.
    const { status } = await this.get(url, this.maxCertificateBytes);
    if (status !== 200) throw new SnsRequestError(`SNS answered the confirmation ${status}`);
  }

  /** A fetch of `url`, unless it failed moments ago or this minute's fetches are spent: then the refusal, at once. */
  private startFetch(url: string, nowMillis: number): Promise<CachedCertificate> {
    for (const [failed, { until }] of this.failures) if (until <= nowMillis) this.failures.delete(failed);
    const failure = this.failures.get(url);
    if (failure) return Promise.reject(failure.error);
    const minute = Math.floor(nowMillis / 60_000);
    if (this.fetchWindow.minute !== minute) this.fetchWindow = { minute, started: 0 };
    if (this.fetchWindow.started >= this.fetchesPerMinute) {
      return Promise.reject(new SnsRequestError(`${this.fetchesPerMinute} signing certificate fetches this minute already`));
    }
    this.fetchWindow.started += 1;
    const fetched = this.fetchCertificate(url);
    fetched.catch((error: Error) => this.failures.set(url, { until: nowMillis + this.failureCacheMs, error }));
    return fetched;
  }

  private async fetchCertificate(url: string): Promise<CachedCertificate> {
    const { status, body } = await this.get(url, this.maxCertificateBytes);
    if (status !== 200) throw new SnsRequestError(`SNS answered ${status} for the signing certificate`);
    let certificate: X509Certificate;
    try {
      certificate = new X509Certificate(body);
    } catch {
      throw new SnsRequestError('the signing certificate is not an X.509 certificate');
    }
    return { publicKey: certificate.publicKey, validFrom: Date.parse(certificate.validFrom), validTo: Date.parse(certificate.validTo) };
  }

  /** One GET, its body capped at `maxBytes`; a redirect is answered as its status, never followed. */
  private get(url: string, maxBytes: number): Promise<{ readonly status: number; readonly body: Buffer }> {
    return new Promise((resolve, reject) => {
      const fail = (error: unknown) => reject(error instanceof SnsRequestError ? error : new SnsRequestError(`SNS could not be reached (${errorName(error)})`));
      const request = httpsGet(url, { ...(this.trustedAuthorities ? { ca: this.trustedAuthorities } : {}), timeout: this.timeoutMs }, (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) request.destroy(new SnsRequestError(`SNS's answer is larger than ${maxBytes} bytes`));
          else chunks.push(chunk);
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) }));
        response.on('error', fail);
      });
      request.on('timeout', () => request.destroy(new SnsRequestError('SNS did not answer in time')));
      request.on('error', fail);
    });
  }
}
