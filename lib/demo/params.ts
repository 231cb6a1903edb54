/**
 * Parameters of the Connector churn replay. The defaults reproduce the Connector churn write-up (the Connector status
 * churn incident of 11–13 September 2026); every number below is either from that write-up or
 * chosen so that the write-up's published windows come out of the simulation.
 */
export interface Marker {
  timeMs: number;
  label: string;
  detail: string;
  kind: "release" | "note";
}

export interface ReplayParams {
  seed: number;
  /** the replay's window */
  startMs: number;
  endMs: number;
  /** when Connector status writes rose, and when the churn stopped */
  onsetMs: number;
  eventEndMs: number;
  scrapeIntervalSeconds: number;
  projects: number;
  connectors: number;
  sites: string[];
  /** agents online through the whole window (besides the named ones) */
  alwaysOnlineAgents: number;
  /** connectors whose agents come and go before the onset: the real Ready flips */
  sessionAgents: number;
  /** connectors whose leases flap from the onset to the end of the event (besides the named ones) */
  flappingConnectors: number;
  /** flapping lease writes (each a reconcile that ends not ready) per 6 h window of the event */
  flapsPer6h: [number, number];
  /** agent connectionDetails PATCHes across all online agents */
  addressPatchesPerSecond: number;
  /** agent lease renewal interval (leaseDuration/2 + up to 10 %) */
  renewalSeconds: [number, number];
  /** edge rebuild duration outside and during the event */
  rebuildSeconds: { before: [number, number]; during: [number, number] };
  /** rebuild triggers per site and hour that are not Connector writes (other propagated kinds) */
  otherTriggersPerHour: number;
  markers: Marker[];
}

const at = (iso: string) => Date.parse(iso);

// The infra rollout and its rollback are recorded changes of the replay (releases.ts), not markers.
export const SEED_MARKERS: Marker[] = [
  { timeMs: at("2026-09-11T04:04:00Z"), label: "DatumConnect v0.1.4", detail: "Desktop release; no client code over v0.1.3.", kind: "release" },
];

export const DEFAULT_REPLAY: ReplayParams = {
  seed: 9928,
  startMs: at("2026-09-09T00:00:00Z"),
  endMs: at("2026-09-13T06:00:00Z"),
  onsetMs: at("2026-09-11T13:12:00Z"),
  eventEndMs: at("2026-09-13T00:45:00Z"),
  scrapeIntervalSeconds: 30,
  projects: 12,
  connectors: 89,
  sites: ["edge-ams1", "edge-fra1", "edge-iad1", "edge-lax1", "edge-sin1", "edge-syd1", "edge-gru1"],
  alwaysOnlineAgents: 2,
  sessionAgents: 3,
  flappingConnectors: 5,
  flapsPer6h: [1080, 1380],
  addressPatchesPerSecond: 0.003,
  renewalSeconds: [15, 18],
  rebuildSeconds: { before: [5, 7], during: [13, 15] },
  otherTriggersPerHour: 6,
  markers: SEED_MARKERS,
};

/** Named objects of the Connector churn write-up. */
export const NAMED = {
  project: "demos-md21mk",
  /** flaps from the onset and is not written after about 15:10Z on the 11th */
  quiet: "datum-connect-zr5z4",
  quietAfterMs: at("2026-09-11T15:10:00Z"),
  /** online until its last Ready transition just before 18:12Z on the 11th, then flaps */
  flipsThenFlaps: "datum-connect-bpb8q",
  offlineAtMs: at("2026-09-11T18:11:25Z"),
  /** the one Ready transition on 13 September */
  onlineOn13th: "datum-connect-q4w8n",
  onlineOn13thMs: at("2026-09-13T03:40:00Z"),
} as const;
