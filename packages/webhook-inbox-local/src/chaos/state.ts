/** What a fault-injection run keeps while it runs: the faults it injected, and what its adversary knows. */
import { decodeWorkMessage } from '../../../../lambda/shared/stores/work-queue';
import type { SignedRequest } from '../providers/sender';
import type { FaultKind } from './audit';

export class FaultCounter {
  readonly counts: Partial<Record<FaultKind, number>> = {};

  add(kind: FaultKind, n = 1): void {
    this.counts[kind] = (this.counts[kind] ?? 0) + n;
  }
}

/** What the run knows while it runs. */
export class RunState {
  endpointDown = false;
  storeDown = false;
  queueDown = false;
  /** When the work queue went down and came back (epoch ms), once it has. */
  queueOutage?: { downAt: number; upAt?: number };
  /** When the processing's downstream failed and came back (epoch ms), once it has. */
  downstreamOutage?: { downAt: number; upAt?: number };
  /** The store throttles the verifier: its answers are 503 as in an outage. */
  storeThrottled = false;
  processorInvocations = 0;
  workerCrashesArmed = 0;
  /** The crash cadence came round and no batch free of killed rows has taken the crash yet. */
  workerCrashDue = false;
  queueDepth = 0;
  alteredSkipped = 0;
  /** Signatures of attempts whose verifier invocation dies right after its inbox write. */
  readonly armedWrites = new Set<string>();
  /** Delivery ids whose first attempt is to be armed so. */
  readonly crashOnFirstAttempt = new Set<string>();
  /** Delivery ids whose first attempt goes out as this many identical concurrent copies. */
  readonly copies = new Map<string, number>();
  /** Inbox keys of rows whose processing was interrupted: their invocation died, or reported them failed. */
  readonly interruptedRows = new Set<string>();
  /** Inbox keys of rows whose processor invocation died (a crash or a timeout). */
  readonly killedRows = new Set<string>();
  /** When each receive of a work message (by `receiveKey`) was handed to a processor invocation, epoch ms. */
  readonly receivedAt = new Map<string, number>();
  readonly signatureTokens = new Set<string>();
  /** The answers to the flood on a route of its own. */
  readonly routeFlood: number[] = [];
  readonly lastRequest = new Map<string, SignedRequest>();
  /** Inbox keys of the messages taken from the DLQ. */
  readonly deadLettered: string[] = [];
  readonly errors: string[] = [];

  /** Any outage, of the store, the queue or the endpoint. */
  anyOutage(): boolean {
    return this.endpointDown || this.storeDown || this.queueDown;
  }

  /** The phase of the run now (`calm`, `store_down`, ...), as an adversarial request records it. */
  phase(): string {
    return this.endpointDown
      ? 'endpoint_down'
      : this.storeDown
        ? 'store_down'
        : this.queueDown
          ? 'queue_down'
          : this.storeThrottled
            ? 'store_throttled'
            : 'calm';
  }
}

/** The signature header of a request (either scheme): what pairs an armed attempt with its verifier invocation. */
export function signatureOf(headers: Readonly<Record<string, string | undefined>> | undefined): string | undefined {
  return headers?.['webhook-signature'] ?? headers?.['x-webhook-signature'];
}

/** One receive of a work message: its id and SQS's receive count, as the processor logs them. */
export function receiveKey(messageId: string | undefined, receiveCount: string | number | undefined): string {
  return `${messageId}/${receiveCount}`;
}

/** The inbox key a work message carries; undefined for anything that is not one. */
export function workKey(body: string): string | undefined {
  try {
    return decodeWorkMessage(body);
  } catch {
    return undefined;
  }
}
