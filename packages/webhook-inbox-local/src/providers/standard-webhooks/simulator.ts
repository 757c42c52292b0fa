/**
 * A simulated Standard Webhooks sender in the shape of OpenAI's webhooks (docs/providers/standard-webhooks.md):
 * `response.completed` events that carry only the resource id (`data.id`); the resource itself is
 * served by a FAKE resource API (`fake-api.ts` beside this file), which the inbox's authoritative
 * read fetches before anything is exposed; a resource that is gone answers 404.
 *
 * - `webhook-id` is the event's stable id, the same on every retry, and signed;
 * - each attempt is signed anew with its own timestamp (`v1,` base64 HMAC-SHA256 of
 *   `id.timestamp.body`);
 * - the long schedule: retries for up to about 72 hours (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h,
 *   20 h, 24 h, each shortened by up to 10 % of jitter), 15 s timeout. There is no polling API for events:
 *   the long window is the recovery path.
 *
 * For the local twin's fault-injection run; its records are what the auditor trusts.
 */
import { attemptsOf, StandardWebhooksDelivery } from '../../../../../lib/contract';
import { FakeResponsesApi } from './fake-api';
import { Random } from '../random';
import { DeliveryRecord, providerSender, RetryingSender, RetrySchedule, SignedRequest, SimulatedProviderOptions } from '../sender';
import { standardWebhooksHeaders, unixSeconds } from '../signing';

export const STANDARD_WEBHOOKS = 'standard-webhooks';

export const STANDARD_WEBHOOKS_SCHEDULE: RetrySchedule = {
  maxAttempts: attemptsOf(StandardWebhooksDelivery),
  // The schedule's waits are the longest; jitter only shortens them, so the window holds.
  waitBeforeMs: (attempt, random) => StandardWebhooksDelivery.maxWaitsSeconds[attempt - 2] * 1000 * (1 - random.next() * 0.1),
  timeoutMs: StandardWebhooksDelivery.attemptTimeoutSeconds * 1000,
};

export interface StandardWebhooksEvent {
  /** `webhook-id`: the stable event id. */
  readonly id: string;
  readonly type: string;
  /** The resource the event names (`data.id`). */
  readonly resourceId: string;
  /** The resource is gone by the time the receiver reads it (404). */
  readonly missing: boolean;
  readonly poison: boolean;
  delivery?: DeliveryRecord;
  readonly random: Random;
}

export interface SimulatedStandardWebhooksOptions extends SimulatedProviderOptions {
  /** The resource API the receiver's authoritative read fetches from. */
  readonly resources: FakeResponsesApi;
}

export class SimulatedStandardWebhooks {
  readonly events = new Map<string, StandardWebhooksEvent>();
  readonly sender: RetryingSender;

  constructor(private readonly options: SimulatedStandardWebhooksOptions) {
    this.sender = providerSender(STANDARD_WEBHOOKS, STANDARD_WEBHOOKS_SCHEDULE, options, 'standard-webhooks-sender');
  }

  /**
   * A response completed: the resource is stored (unless `missing`: it is gone before the receiver
   * reads it) and the event is delivered. A `poison` event names a resource the provider's API
   * fails to serve on every read (500): the row fails every attempt. Returns the event (its
   * delivery record exists, its first attempt not sent yet) and the delivery's end.
   */
  emit(label: string, options: { missing?: boolean; poison?: boolean } = {}): { event: StandardWebhooksEvent; delivered: Promise<DeliveryRecord> } {
    const random = this.options.random.stream(`event/${label}`);
    const resourceId = `resp_${random.hex(24)}`;
    const event: StandardWebhooksEvent = {
      id: `wh_${random.hex(24)}`,
      type: 'response.completed',
      resourceId,
      missing: options.missing ?? false,
      poison: options.poison ?? false,
      random,
    };
    this.events.set(event.id, event);
    if (event.poison) this.options.resources.failAlways(resourceId);
    else if (!event.missing)
      this.options.resources.put(resourceId, { id: resourceId, object: 'response', status: 'completed', output_text: `pii_${random.hex(16)}` });
    const body = Buffer.from(JSON.stringify({ object: 'event', id: event.id, type: event.type, created_at: unixSeconds(), data: { id: resourceId } }));
    const delivery = this.sender.newDelivery({ id: event.id, eventKey: `${STANDARD_WEBHOOKS}#${event.id}`, kind: event.poison ? 'poison' : 'result', body });
    event.delivery = delivery;
    return { event, delivered: this.sender.deliver(delivery, () => this.signAt(event.id, unixSeconds(), body), random) };
  }

  /** A contract anomaly: the same `webhook-id` with another body. */
  sendAltered(eventId: string): Promise<DeliveryRecord> {
    const event = this.events.get(eventId);
    if (!event?.delivery) throw new Error(`no event ${eventId}`);
    const original = JSON.parse(event.delivery.body.toString('utf8')) as Record<string, unknown>;
    const body = Buffer.from(JSON.stringify({ ...original, type: 'response.failed' }));
    const delivery = this.sender.newDelivery({ id: event.id, eventKey: `${STANDARD_WEBHOOKS}#${event.id}`, kind: 'altered', body });
    return this.sender.deliver(delivery, () => this.signAt(event.id, unixSeconds(), body), event.random);
  }

  signAt(eventId: string, timestampSeconds: number, body: Buffer, secret = this.options.secret): SignedRequest {
    return { headers: standardWebhooksHeaders(secret, eventId, timestampSeconds, body), body };
  }
}
