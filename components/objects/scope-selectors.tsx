"use client";
/** Which objects a view covers: cluster, kind and namespace, shared by Objects and Field churn (both keep them in the URL). */

export const SELECT_CLASS = "rounded border border-[var(--border)] bg-[var(--panel)] px-2 py-1";

export interface Scope {
  cluster: string | null;
  group: string | null;
  kind: string | null;
  namespace: string | null;
}

interface Props {
  /** every cluster/group/kind the store has objects of */
  kinds: { cluster: string; group: string; kind: string }[];
  scope: Scope;
  onChange: (scope: Partial<Scope>) => void;
}

export function ScopeSelectors({ kinds, scope, onChange }: Props) {
  const kindValue = scope.kind ? `${scope.group ?? ""}/${scope.kind}` : "";
  // What the URL names stays selectable while the store's list loads, or when it holds none of it.
  const clusters = [...new Set([...(scope.cluster ? [scope.cluster] : []), ...kinds.map((k) => k.cluster)])];
  const kindValues = [...new Set([...(kindValue ? [kindValue] : []), ...kinds.map((k) => `${k.group}/${k.kind}`)])];
  return (
    <>
      <select
        data-testid="cluster-select"
        aria-label="cluster"
        className={SELECT_CLASS}
        value={scope.cluster ?? ""}
        onChange={(e) => onChange({ cluster: e.target.value || null })}
      >
        <option value="">All clusters</option>
        {clusters.map((c) => (
          <option key={c}>{c}</option>
        ))}
      </select>
      <select
        data-testid="kind-select"
        aria-label="kind"
        className={SELECT_CLASS}
        value={kindValue}
        onChange={(e) => {
          const [group, kind] = e.target.value ? e.target.value.split("/") : [null, null];
          onChange({ group: e.target.value ? group : null, kind: kind || null });
        }}
      >
        <option value="">All kinds</option>
        {kindValues.map((k) => (
          <option key={k} value={k}>
            {k.split("/")[1]} {k.split("/")[0] ? `(${k.split("/")[0]})` : "(core)"}
          </option>
        ))}
      </select>
      <input
        data-testid="namespace-input"
        aria-label="namespace"
        className={`${SELECT_CLASS} w-48`}
        placeholder="namespace"
        defaultValue={scope.namespace ?? ""}
        onKeyDown={(e) => e.key === "Enter" && onChange({ namespace: e.currentTarget.value || null })}
        onBlur={(e) => onChange({ namespace: e.target.value || null })}
      />
    </>
  );
}
