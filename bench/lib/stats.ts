/** The p-th percentile (0-100) of values, nearest-rank on a sorted copy; NaN when there are none. */
export function percentile(values: ArrayLike<number>, p: number): number {
  const sorted = Float64Array.from(values).sort();
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export function median(values: readonly number[]): number {
  return percentile(values.filter((value) => Number.isFinite(value)), 50);
}

export function max(values: ArrayLike<number>): number {
  let out = -Infinity;
  for (let i = 0; i < values.length; i++) if (values[i]! > out) out = values[i]!;
  return values.length ? out : NaN;
}

/** Rounds for display: three significant digits below 100, whole numbers above. */
export function round(value: number): number {
  if (!Number.isFinite(value)) return value;
  if (Math.abs(value) >= 100) return Math.round(value);
  return Number(value.toPrecision(3));
}
