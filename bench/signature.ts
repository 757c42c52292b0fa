/**
 * Signature verification against the reference libraries, on 1 KiB, 64 KiB and 1 MiB bodies:
 * our check (lambda/shared/signatures/standard-webhooks.ts, `verifyStandardWebhooks`) beside
 * `standardwebhooks` (`Webhook.verify`) and `svix` (`Webhook.verify`), all verifying the same
 * signed delivery, all handed the body as a handler receives it (a string: ours converts it to
 * the bytes it verifies inside the timed call).
 *
 * Like for like: `standardwebhooks` is called with `{ jsonParse: false }`, so it checks the
 * signature only, as ours does; `svix` has no such option and always parses the verified JSON,
 * so it is compared with our check followed by one JSON.parse of the body (`ours + parse`).
 *
 * Method: for each size, rounds of interleaved batches (the order rotates each round), a batch
 * long enough to time well; the first rounds are a warm-up; the figure is the median of the
 * per-operation times of the batches.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { Defaults } from '../lib/contract';
import { SigningKey } from '../lambda/shared/signatures/signing-key';
import { decodeStandardWebhooksSecret, verifyStandardWebhooks } from '../lambda/shared/signatures/standard-webhooks';
import { signedHeaders } from './environment';
import { median } from './stats';

export interface SignatureOptions {
  readonly sizes: readonly number[];
  /** Target milliseconds of one batch. */
  readonly batchMs: number;
  readonly rounds: number;
  readonly warmupRounds: number;
}

export interface SignatureRow {
  readonly bytes: number;
  /** Median microseconds per verification. */
  readonly oursUs: number;
  readonly oursWithParseUs: number;
  readonly standardWebhooksUs: number;
  readonly svixUs: number;
  /** standardwebhooks ÷ ours (signature check only, both). */
  readonly vsStandardWebhooks: number;
  /** svix ÷ (ours + JSON.parse) (both parse). */
  readonly vsSvix: number;
  readonly iterationsPerBatch: Record<string, number>;
}

export interface SignatureResult {
  readonly rows: SignatureRow[];
  readonly conditions: string;
}

const TOLERANCE = { pastSeconds: Defaults.TIMESTAMP_TOLERANCE_SECONDS, futureSeconds: Defaults.TIMESTAMP_TOLERANCE_SECONDS };

/** A JSON body of exactly `bytes` bytes (the libraries that parse need JSON). */
function jsonBody(bytes: number): string {
  const shell = JSON.stringify({ id: randomUUID(), data: '' });
  return JSON.stringify({ id: randomUUID(), data: 'x'.repeat(bytes - Buffer.byteLength(shell)) });
}

export function measureSignatures(options: SignatureOptions): SignatureResult {
  const secret = `whsec_${Buffer.from(randomUUID()).toString('base64')}`;
  const keys: SigningKey[] = [{ bytes: decodeStandardWebhooksSecret(secret), stage: 'AWSCURRENT' }];
  const standardWebhooks = new StandardWebhook(secret);
  const svix = new SvixWebhook(secret);
  const rows: SignatureRow[] = [];
  for (const bytes of options.sizes) {
    const body = jsonBody(bytes);
    const now = Math.floor(Date.now() / 1000);
    const headers = signedHeaders(body, secret, now);
    const ours = () => {
      const verdict = verifyStandardWebhooks(headers, Buffer.from(body, 'utf8'), keys, now, TOLERANCE);
      if (!verdict.ok) throw new Error(`our check rejected the delivery: ${verdict.detail}`);
    };
    const candidates: Record<string, () => unknown> = {
      ours,
      oursWithParse: () => {
        ours();
        return JSON.parse(body) as unknown;
      },
      standardWebhooks: () => standardWebhooks.verify(body, headers, { jsonParse: false }),
      svix: () => svix.verify(body, headers),
    };
    const names = Object.keys(candidates);
    // Iterations per batch: as many as run in about `batchMs`, counted after a first warm call.
    const iterations: Record<string, number> = {};
    for (const name of names) {
      candidates[name]();
      let count = 0;
      const t0 = performance.now();
      while (performance.now() - t0 < options.batchMs) {
        candidates[name]();
        count++;
      }
      iterations[name] = Math.max(3, count);
    }
    const perOp: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
    for (let round = 0; round < options.warmupRounds + options.rounds; round++) {
      for (let k = 0; k < names.length; k++) {
        const name = names[(round + k) % names.length];
        const run = candidates[name];
        const count = iterations[name];
        const t0 = performance.now();
        for (let i = 0; i < count; i++) run();
        const us = ((performance.now() - t0) / count) * 1000;
        if (round >= options.warmupRounds) perOp[name].push(us);
      }
    }
    const us = Object.fromEntries(names.map((name) => [name, median(perOp[name])]));
    rows.push({
      bytes,
      oursUs: us.ours,
      oursWithParseUs: us.oursWithParse,
      standardWebhooksUs: us.standardWebhooks,
      svixUs: us.svix,
      vsStandardWebhooks: us.standardWebhooks / us.ours,
      vsSvix: us.svix / us.oursWithParse,
      iterationsPerBatch: iterations,
    });
  }
  return {
    rows,
    conditions: `${options.rounds} interleaved rounds after ${options.warmupRounds} warm-up rounds, batches of ~${options.batchMs} ms, median µs per verification, one valid v1 signature, one key`,
  };
}
