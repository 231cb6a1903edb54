import { describe, expect, it } from "vitest";
import { dottedResource, goTypeResource } from "@/lib/panels/resource-labels";

/** The matcher as a JavaScript RegExp, anchored as PromQL anchors it, with RE2's leading (?i) as the i flag. */
function matches(matcher: ReturnType<typeof goTypeResource>, value: string): boolean {
  if (matcher === undefined || matcher === "custom") throw new Error(`no matcher: ${matcher}`);
  const insensitive = matcher.value.startsWith("(?i)");
  return new RegExp(`^(?:${insensitive ? matcher.value.slice(4) : matcher.value})$`, insensitive ? "i" : "").test(value);
}

describe("resource labels by version", () => {
  it("names a built-in resource by its stored Go type, and a custom one as one that cannot be told apart", () => {
    expect(matches(goTypeResource("leases", "coordination.k8s.io"), "*coordination.Lease")).toBe(true);
    expect(matches(goTypeResource("pods", ""), "*core.Pod")).toBe(true);
    expect(matches(goTypeResource("pods", ""), "*core.PodTemplate")).toBe(false);
    expect(matches(goTypeResource("pods", ""), "*[]core.Pod")).toBe(false);
    expect(matches(goTypeResource("ingresses", "networking.k8s.io"), "*networking.Ingress")).toBe(true);
    expect(matches(goTypeResource("networkpolicies", "networking.k8s.io"), "*networking.NetworkPolicy")).toBe(true);
    expect(matches(goTypeResource("endpoints", ""), "*core.Endpoints")).toBe(true);
    expect(matches(goTypeResource("clusterroles", "rbac.authorization.k8s.io"), "*rbac.ClusterRole")).toBe(true);
    expect(matches(goTypeResource("events", "events.k8s.io"), "*core.Event")).toBe(true);
    // Any group when none is chosen; but not another package's kind when one is.
    expect(matches(goTypeResource("ingresses", undefined), "*extensions.Ingress")).toBe(true);
    expect(matches(goTypeResource("leases", "coordination.k8s.io"), "*core.Lease")).toBe(false);
    expect(goTypeResource("httproutes", "gateway.networking.k8s.io")).toBe("custom");
    expect(goTypeResource("connectors", "networking.datumapis.com")).toBe("custom");
    expect(goTypeResource(undefined, undefined)).toBeUndefined();
  });

  it("joins a resource to its group with a dot, bare for the core group, any group when none is chosen", () => {
    expect(dottedResource("type", "leases", "coordination.k8s.io")).toEqual({ label: "type", op: "=", value: "leases.coordination.k8s.io" });
    expect(dottedResource("resource", "pods", "")).toEqual({ label: "resource", op: "=", value: "pods" });
    const any = dottedResource("resource", "leases", undefined)!;
    expect(matches(any, "leases.coordination.k8s.io") && matches(any, "leases") && !matches(any, "leasesx")).toBe(true);
  });
});
