/** Small statistics helpers for the bench: percentiles, medians, ratios, formatting. */

/** The p-th percentile (0–100) of `values`, nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

export const median = (values: readonly number[]): number => percentile(values, 50);

export function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((sum, value) => sum + value, 0) / values.length;
}

/** A number with `digits` decimals, without trailing noise. */
export function fixed(value: number, digits = 2): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

/** `1.23×` */
export function times(value: number, digits = 2): string {
  return `${fixed(value, digits)}×`;
}

/** `$1.234` with enough digits for small amounts. */
export function dollars(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  return value >= 10 ? `$${value.toFixed(2)}` : `$${value.toFixed(3)}`;
}
