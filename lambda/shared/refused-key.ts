import { MetricName } from '../../lib/contract';
import { logReference } from './runtime/digest';
import { Telemetry } from './runtime/telemetry';

/** The log line of a key refused because it is not a delivery row's. */
export const REFUSED_KEY_MESSAGE = 'refused a key that is not a delivery row’s';

/** Where a refused key was found: the sweep's pending index, or a work message. */
export type RefusedKeySource = 'sweep' | 'work_queue';

/**
 * Counts (`RefusedKeys`) and logs a key that is not a delivery row's (`isDeliveryKey`) found
 * where only delivery keys belong; the caller processes nothing for it. The line names the key
 * by its reference only, as every line does (docs/RUNBOOK.md#metrics-without-an-alarm-worth-a-look).
 */
export function refuseKey(telemetry: Telemetry, key: string, source: RefusedKeySource): void {
  telemetry.count(MetricName.REFUSED_KEYS, undefined);
  telemetry.log('WARN', REFUSED_KEY_MESSAGE, { reason: 'not_a_delivery_key', source, eventRef: logReference(key) });
}
