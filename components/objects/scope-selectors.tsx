"use client";
/** Which objects a view covers: cluster, kind and namespace, shared by Objects and Field churn (both keep them in the URL). */
import { useEffect, useState } from "react";
import { useSearchParams } from "next/navigation";
import { badValue, unknownValue } from "@/lib/format/param-notices";
import { OBJECT_SORTS } from "@/lib/wire/objects";

export const SELECT_CLASS = "rounded border border-[var(--border)] bg-[var(--panel)] px-2 py-1";

export interface Scope {
  cluster: string | null;
  group: string | null;
  kind: string | null;
  namespace: string | null;
}

type Kinds = { cluster: string; group: string; kind: string }[];

/**
 * The scope a page asks for: the link's, less a cluster or kind the store has no objects of, each named in a notice
 * with what is shown instead, so that a bad link shows every object rather than none. The store's kinds come with
 * the page's own answer (`useLearnedKinds`); until then the link's scope is asked for as it is.
 */
export function useKnownScope(link: Scope) {
  const asked = { cluster: link.cluster ?? undefined, group: link.group ?? undefined, kind: link.kind ?? undefined, namespace: link.namespace ?? undefined };
  const [kinds, learn] = useState<Kinds | undefined>(undefined);
  if (!kinds || kinds.length === 0) return { scope: asked, selected: selectedOf(asked), notices: [] as string[], learn };
  const clusters = [...new Set(kinds.map((k) => k.cluster))].sort();
  const unknownCluster = asked.cluster !== undefined && !clusters.includes(asked.cluster);
  const kindNames = [...new Set(kinds.map((k) => k.kind))].sort();
  const unknownKind = asked.kind !== undefined && !kinds.some((k) => k.kind === asked.kind && (asked.group === undefined || k.group === asked.group));
  const scope = { ...asked, ...(unknownCluster ? { cluster: undefined } : {}), ...(unknownKind ? { kind: undefined, group: undefined } : {}) };
  const notices = [
    ...(unknownCluster ? [unknownValue("cluster", asked.cluster!, clusters, "showing every cluster")] : []),
    ...(unknownKind ? [unknownValue("kind", asked.kind!, kindNames, "showing every kind")] : []),
  ];
  return { scope, selected: selectedOf(scope), notices, learn };
}

/** What the selectors show: the scope the page asks for. */
const selectedOf = (scope: { cluster?: string; group?: string; kind?: string; namespace?: string }): Scope => ({
  cluster: scope.cluster ?? null,
  group: scope.group ?? null,
  kind: scope.kind ?? null,
  namespace: scope.namespace ?? null,
});

/** A sort the object pages do not have (the link's sort is then the default, writes), said. */
export function useSortNotices(): string[] {
  const asked = useSearchParams().get("sort");
  return asked !== null && !(OBJECT_SORTS as readonly string[]).includes(asked)
    ? [badValue("sort", asked, `one of ${OBJECT_SORTS.join(", ")}`, "sorting by writes")]
    : [];
}

/** Hands the store's kinds from a page's answer to its useKnownScope. */
export function useLearnedKinds(known: { learn: (kinds: Kinds) => void }, answered: Kinds | undefined): void {
  const { learn } = known;
  useEffect(() => {
    if (answered) learn(answered);
  }, [answered, learn]);
}

interface Props {
  /** every cluster/group/kind the store has objects of */
  kinds: Kinds;
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
