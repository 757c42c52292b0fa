/** How a provider retries a delivery it could not hand over, as its documentation states it. */
export interface DeliverySchedule {
  /** The longest wait before each retry, in seconds: one per attempt after the first. */
  readonly maxWaitsSeconds: readonly number[];
  /** How long one attempt may take before it counts as failed. */
  readonly attemptTimeoutSeconds: number;
}

/** Attempts in all, the first one included. */
export function attemptsOf(schedule: DeliverySchedule): number {
  return schedule.maxWaitsSeconds.length + 1;
}

/** From the first attempt's start to the last attempt's end, at worst: every wait at its longest, every attempt timing out. */
export function retryWindowSeconds(schedule: DeliverySchedule): number {
  return schedule.maxWaitsSeconds.reduce((sum, wait) => sum + wait, 0) + attemptsOf(schedule) * schedule.attemptTimeoutSeconds;
}
