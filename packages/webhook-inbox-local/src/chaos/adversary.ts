/**
 * The adversary's requests: a captured delivery replayed as it was (a duplicate), and requests for
 * ids never delivered, signed 400 s in the past or the future, or with a wrong secret. Each names
 * a body marked as content (`pii_…`), which no log line may carry.
 */
import { ANSWERLINE } from '../providers/answerline/simulator';
import { echonovaJobEventKey } from '../providers/echonova/simulator';
import type { Random } from '../providers/random';
import type { SignedRequest } from '../providers/sender';
import { signatureTokens, standardWebhooksHeaders, unixSeconds } from '../providers/signing';
import { STANDARD_WEBHOOKS } from '../providers/standard-webhooks/simulator';
import type { AdversaryRecord } from './audit';
import { ROUTE_FLOOD, type AdversaryKind, type Provider } from './plan';
import type { ChaosRig } from './setup';

/** Delivered requests by provider, the latest last: what a replay picks from. */
export type CapturedRequests = ReadonlyMap<Provider, readonly { eventKey: string; request: SignedRequest }[]>;

/** Sends one adversarial request as `provider` would; what it named and how it was answered (undefined: nothing to replay yet). */
export async function sendAdversarial(
  rig: ChaosRig,
  kind: AdversaryKind,
  provider: Provider,
  label: string,
  captured: CapturedRequests,
): Promise<AdversaryRecord | undefined> {
  const { random, state } = rig;
  const sender = provider === 'answerline' ? rig.answerline.sender : provider === 'echonova' ? rig.echonova.sender : rig.standardWebhooks.sender;
  if (kind === 'replay') {
    // A captured delivery sent again as it was, within the timestamp tolerance: a duplicate.
    let eventKey: string | undefined;
    const outcome = await sender.sendOnce(() => {
      const candidates = captured.get(provider) ?? [];
      const chosen = candidates[random.stream(`replay/${label}`).int(candidates.length)];
      eventKey = chosen?.eventKey;
      return chosen?.request ?? { headers: {}, body: Buffer.alloc(0) };
    });
    return eventKey ? { kind, provider, eventKey, status: outcome.status, during: state.phase() } : undefined;
  }
  // Never delivered ids: signed with a timestamp 400 s off, or with a wrong secret.
  const r = random.stream(`adversary/${label}`);
  const wrongSecret = provider === 'echonova' ? r.hex(64) : `whsec_${r.bytes(32).toString('base64')}`;
  const secret = kind === 'forged' ? wrongSecret : undefined;
  const id = `${kind}_${r.hex(12)}`;
  const content = `pii_${r.hex(16)}`;
  const eventKey =
    provider === 'answerline' ? `${ANSWERLINE}#tsk_${id}` : provider === 'echonova' ? echonovaJobEventKey(`job_${id}`) : `${STANDARD_WEBHOOKS}#wh_${id}`;
  const outcome = await sender.sendOnce(() => {
    const now = unixSeconds();
    const timestamp = kind === 'stale' ? now - 400 : kind === 'future' ? now + 400 : now;
    const request = signedAs(rig, provider, { kind, label, id, content, now, timestamp, secret, random: r });
    for (const token of signatureTokens(request.headers)) state.signatureTokens.add(token);
    return request;
  });
  return { kind, provider, eventKey, status: outcome.status, during: state.phase() };
}

interface Forgery {
  readonly kind: AdversaryKind;
  readonly label: string;
  readonly id: string;
  readonly content: string;
  readonly now: number;
  readonly timestamp: number;
  /** A wrong secret to sign with; undefined: the provider's own. */
  readonly secret?: string;
  /** The forgery's own stream: the delivery id (Answerline) or the resource id (Standard Webhooks) are drawn from it. */
  readonly random: Random;
}

/** A result of the id the forgery names, in the provider's body format, signed at its timestamp. */
function signedAs({ answerline, echonova, standardWebhooks }: ChaosRig, provider: Provider, forgery: Forgery): SignedRequest {
  const { kind, label, id, content, now, timestamp, secret } = forgery;
  if (provider === 'answerline') {
    const body = Buffer.from(
      JSON.stringify({
        task: { id: `tsk_${id}`, status: 'COMPLETED', idempotencyKey: `${kind}-${label}`, createdAt: new Date().toISOString() },
        response: { result: { answer: content } },
      }),
    );
    return answerline.signAt(`msg_${forgery.random.hex(24)}`, timestamp, body, secret);
  }
  if (provider === 'echonova') {
    const body = Buffer.from(JSON.stringify({ jobId: `job_${id}`, status: 'completed', createdAt: new Date().toISOString(), result: { transcript: content } }));
    return echonova.signAt('job.completed', timestamp, body, secret);
  }
  const body = Buffer.from(
    JSON.stringify({ object: 'event', id: `wh_${id}`, type: 'response.completed', created_at: now, data: { id: `resp_${forgery.random.hex(24)}` } }),
  );
  return standardWebhooks.signAt(`wh_${id}`, timestamp, body, secret);
}

/**
 * The flood on a route of its own: `ROUTE_FLOOD.requests` forged Standard Webhooks requests at
 * once, each a new id signed with a wrong secret; the status each was answered (0: no answer).
 */
export async function floodRoute({ twin, random, state }: ChaosRig): Promise<number[]> {
  const r = random.stream('route-flood');
  const url = twin.urls[ROUTE_FLOOD.provider];
  const requests = Array.from({ length: ROUTE_FLOOD.requests }, (_, i) => {
    const id = `flood_${i}_${r.hex(8)}`;
    const body = Buffer.from(JSON.stringify({ object: 'event', id, type: 'response.completed', created_at: unixSeconds(), data: { id: `resp_${r.hex(12)}` } }));
    const headers = standardWebhooksHeaders(`whsec_${r.bytes(32).toString('base64')}`, id, unixSeconds(), body);
    for (const token of signatureTokens(headers)) state.signatureTokens.add(token);
    return { headers, body };
  });
  return Promise.all(
    requests.map(({ headers, body }) =>
      fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(15_000) }).then(
        async (response) => (await response.arrayBuffer(), response.status),
        () => 0,
      ),
    ),
  );
}
