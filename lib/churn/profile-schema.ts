/** What a profile in the config file may say (see profiles.ts for what a profile means). */
import { JSONPath } from "jsonpath-plus";
import { z } from "zod";
import { ALWAYS_IGNORED_PATHS } from "./diff";

const jsonPath = z
  .string()
  .min(2)
  .max(500)
  .regex(/^\$/, "expected a JSONPath starting with $")
  .refine(parses, { error: "not a JSONPath that jsonpath-plus can read (check brackets and quotes)" });

/**
 * Whether jsonpath-plus can evaluate the path: a syntax error would otherwise fail every write it
 * reads. Filters are parsed only when they meet a value, so the path runs over an object shaped like
 * it (a list wherever it filters or indexes); errors of evaluation on that stand-in are ignored.
 */
function parses(path: string): boolean {
  try {
    let standIn: unknown = {};
    for (const segment of JSONPath.toPathArray(path).slice(1).reverse()) {
      standIn = /^[?(*]|^\d+$|^\.\.$/.test(segment) ? [standIn] : { [segment]: standIn };
    }
    JSONPath({ path, json: standIn as object, eval: "safe", ignoreEvalErrors: true });
    return true;
  } catch {
    return false;
  }
}

export const profileSchema = z
  .object({
    name: z.string().regex(/^[a-z0-9-]+$/, "expected lower-case letters, digits and -"),
    group: z.string(),
    version: z.string().min(1),
    resource: z.string().min(1),
    kind: z.string().min(1),
    /** Cluster: its objects have no namespace (built-in kinds are known; say it for a cluster-scoped custom resource) */
    scope: z.enum(["Namespaced", "Cluster"]).optional(),
    /** clusters to watch it on; empty = every cluster */
    clusters: z.array(z.string()).default([]),
    /** where the routed projection reads from: JSON in this annotation, else `path` (as the consumer does) */
    source: z
      .object({ annotation: z.string().optional(), path: jsonPath.default("$") })
      .strict()
      .default({ path: "$" }),
    /**
     * name → JSONPath (relative to the source). `equals` turns the value into "true"/"false" (is it exactly
     * this?); `onlyWhen` keeps a value only while another projected value equals something, else "".
     */
    routed: z.record(
      z.string(),
      z.object({ path: jsonPath, equals: z.string().optional(), onlyWhen: z.object({ field: z.string(), equals: z.string() }).strict().optional() }).strict(),
    ),
    /** left out before diffing, beside what every write changes (resourceVersion, managedFields, generation), which a profile always leaves out */
    ignore: z
      .array(jsonPath)
      .default([])
      .transform((paths) => [...new Set([...ALWAYS_IGNORED_PATHS, ...paths])]),
    unordered: z.array(jsonPath).default([]),
    heartbeat: z.array(z.string()).default([]),
    /**
     * Record the changes its writes make (changes.ts): `template` a workload's pod template (images, args, env,
     * config references, service account), `revision` what the profile projects (a GitOps tool's applied revision).
     */
    changes: z.enum(["template", "revision"]).optional(),
    description: z.string().optional(),
  })
  .strict();

export type Profile = z.infer<typeof profileSchema>;
