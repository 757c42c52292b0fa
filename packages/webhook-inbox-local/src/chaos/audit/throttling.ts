/**
 * One provider or one attacker cannot starve the others. Stated here: API Gateway answers 429 to a
 * sender over its own route's allowance only, so no genuine delivery of any provider (a result, a
 * test, an altered copy: every request the providers' own records hold) is ever answered 429, even
 * while a flood of forged requests runs on another route. The flood itself is answered 429 past its
 * route's allowance and refused by the verifier within it (a 4xx); nothing of it is accepted, and a
 * flood that was never throttled did not test the rule at all.
 */
import { RunAudit } from './context';

const TOO_MANY_REQUESTS = 429;

export function auditRouteFlood({ evidence, violation, notes }: RunAudit): void {
  const throttled = evidence.deliveries.filter((delivery) => delivery.attempts.some((attempt) => attempt.status === TOO_MANY_REQUESTS));
  if (throttled.length) {
    violation(
      `${throttled.length} genuine deliveries were answered 429: a sender within its own allowance was throttled`,
      throttled.map((delivery) => delivery.eventKey),
    );
  }
  const answers = evidence.routeFlood;
  if (answers.length === 0) return;
  const floodThrottled = answers.filter((status) => status === TOO_MANY_REQUESTS).length;
  const accepted = answers.filter((status) => status >= 200 && status < 300).length;
  const other = answers.filter((status) => status !== TOO_MANY_REQUESTS && !(status >= 400 && status < 500)).length;
  if (accepted) violation(`${accepted} forged requests of the route flood were accepted`);
  if (floodThrottled === 0)
    violation(`none of the ${answers.length} forged requests of the route flood was answered 429: its route's allowance was not enforced`);
  if (other - accepted > 0) notes.push(`${other - accepted} requests of the route flood were answered neither 429 nor 4xx (an outage, or no answer)`);
  notes.push(
    `route flood: ${answers.length} forged requests at once on a route of its own, ${floodThrottled} answered 429, ` +
      `${answers.length - floodThrottled - other} refused by the verifier; genuine deliveries answered 429: ${throttled.length}`,
  );
}
