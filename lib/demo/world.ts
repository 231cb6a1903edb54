/**
 * The replay's cast: projects, their Connectors, and what each Connector's agent does in the window.
 * Names and ids come from the seeded generator, except the objects the Connector churn write-up names.
 */
import type { Rng } from "../scenario/rng";
import { NAMED, type ReplayParams } from "./params";

/** Kubernetes generateName's alphabet (no vowels, no look-alikes). */
const NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789";
const PROJECT_WORDS = [
  "acme-web",
  "northwind",
  "blue-harbor",
  "lumen-labs",
  "kestrel",
  "orbit-io",
  "tidewater",
  "fieldnote",
  "pinecrest",
  "quarry",
  "sable-dev",
  "vantage",
  "wren-app",
  "zephyr",
];

export type Role =
  | { kind: "offline" }
  | { kind: "online"; untilMs?: number }
  | { kind: "sessions"; sessions: [number, number][] }
  | { kind: "flapping"; fromMs: number; untilMs: number; onlineUntilMs?: number }
  | { kind: "created"; atMs: number }
  | { kind: "deleted"; atMs: number }
  | { kind: "late-online"; atMs: number };

export interface ConnectorPlan {
  namespace: string;
  name: string;
  uid: string;
  leaseUid: string;
  hubUid: string;
  anchorUid: string;
  publicKeyId: string;
  addresses: { address: string; port: number }[];
  role: Role;
}

export interface World {
  /** project namespace → its uid (the hub namespace is ns-<uid>) */
  namespaceUids: Map<string, string>;
  connectors: ConnectorPlan[];
}

export function uuid(rng: Rng): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(rng() * 16).toString(16)).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${"89ab"[Math.floor(rng() * 4)]}${hex.slice(17, 20)}-${hex.slice(20)}`;
}

function suffix(rng: Rng, length: number): string {
  return Array.from({ length }, () => NAME_ALPHABET[Math.floor(rng() * NAME_ALPHABET.length)]).join("");
}

const hex64 = (rng: Rng) => Array.from({ length: 64 }, () => Math.floor(rng() * 16).toString(16)).join("");
const ip = (rng: Rng, prefix: string) => `${prefix}.${1 + Math.floor(rng() * 250)}`;

export function buildWorld(params: ReplayParams, rng: Rng): World {
  if (params.projects < 1 || params.connectors < 4) throw new Error("the replay needs at least 1 project and 4 Connectors");
  const namespaces: string[] = [NAMED.project];
  while (namespaces.length < params.projects) namespaces.push(`${PROJECT_WORDS[(namespaces.length - 1) % PROJECT_WORDS.length]}-${suffix(rng, 6)}`);
  const namespaceUids = new Map(namespaces.map((ns) => [ns, uuid(rng)]));

  const names = new Set<string>([NAMED.quiet, NAMED.flipsThenFlaps, NAMED.onlineOn13th]);
  const plan = (namespace: string, name: string, role: Role): ConnectorPlan => ({
    namespace,
    name,
    uid: uuid(rng),
    leaseUid: uuid(rng),
    hubUid: uuid(rng),
    anchorUid: uuid(rng),
    publicKeyId: hex64(rng),
    addresses: [
      { address: ip(rng, "192.0.2"), port: 30000 + Math.floor(rng() * 30000) },
      { address: ip(rng, "10.0.0"), port: 30000 + Math.floor(rng() * 30000) },
    ],
    role,
  });
  const { onsetMs, eventEndMs, startMs } = params;
  const connectors: ConnectorPlan[] = [
    plan(NAMED.project, NAMED.quiet, { kind: "flapping", fromMs: onsetMs, untilMs: NAMED.quietAfterMs }),
    plan(NAMED.project, NAMED.flipsThenFlaps, { kind: "flapping", fromMs: NAMED.offlineAtMs + 35_000, untilMs: eventEndMs, onlineUntilMs: NAMED.offlineAtMs }),
    plan(NAMED.project, NAMED.onlineOn13th, { kind: "late-online", atMs: NAMED.onlineOn13thMs }),
  ];
  const otherNamespace = () => namespaces[1 + Math.floor(rng() * (namespaces.length - 1))] ?? NAMED.project;
  const nextName = () => {
    let name: string;
    do name = `datum-connect-${suffix(rng, 5)}`;
    while (names.has(name));
    names.add(name);
    return name;
  };
  const add = (role: Role, namespace = otherNamespace()) => connectors.push(plan(namespace, nextName(), role));

  for (let i = 0; i < params.alwaysOnlineAgents; i++) add({ kind: "online" });
  const hour = 3_600_000;
  for (let i = 0; i < params.sessionAgents; i++) {
    // One or two sessions of 1–5 h between the window's start and three hours before the onset.
    const span = onsetMs - 3 * hour - startMs;
    const sessions: [number, number][] = [];
    const count = 1 + Math.floor(rng() * 2);
    for (let s = 0; s < count; s++) {
      const from = startMs + ((s + rng() * 0.6) / count) * span;
      sessions.push([Math.round(from), Math.round(from + hour + rng() * 4 * hour)]);
    }
    add({ kind: "sessions", sessions });
  }
  for (let i = 0; i < params.flappingConnectors; i++) add({ kind: "flapping", fromMs: onsetMs, untilMs: eventEndMs });
  add({ kind: "created", atMs: onsetMs + 8 * 60_000 + Math.round(rng() * 10 * 60_000) });
  add({ kind: "created", atMs: onsetMs + 38 * 60_000 + Math.round(rng() * 10 * 60_000) });
  add({ kind: "deleted", atMs: startMs + 33 * hour + Math.round(rng() * hour) });
  add({ kind: "deleted", atMs: onsetMs + 19 * hour + Math.round(rng() * hour) });
  // The rest have no agent running in the window; the project named in the seed gets one more.
  add({ kind: "offline" }, NAMED.project);
  // The window ends with params.connectors Connectors, as the Connector churn write-up counted them on the 13th.
  const deleted = connectors.filter((c) => c.role.kind === "deleted").length;
  while (connectors.length < params.connectors + deleted) add({ kind: "offline" });
  return { namespaceUids, connectors };
}
