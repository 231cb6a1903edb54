/** Counts over a range in equal slices, as a small line: the Objects and Field churn tables' "over time" column. */
export function Sparkline({ values, label }: { values: number[]; label?: string }) {
  const max = Math.max(1, ...values);
  const points = values.map((v, i) => `${(i / (values.length - 1)) * 100},${20 - (v / max) * 18}`).join(" ");
  return (
    <svg
      viewBox="0 0 100 20"
      className="h-5 w-28"
      preserveAspectRatio="none"
      role={label ? "img" : undefined}
      aria-label={label}
      aria-hidden={label ? undefined : true}
    >
      {label && <title>{label}</title>}
      <polyline points={points} fill="none" stroke="var(--accent)" strokeWidth="1.2" vectorEffect="non-scaling-stroke" />
    </svg>
  );
}
