// The TypeScript declarations of every option and result of the JS API,
// appended to the generated .d.ts (src/js/mod.rs). A typed usage file,
// tests/e2e/typed-usage.ts, is compiled against them by the test command.
/** A 64-bit integer on the way in: a BigInt, a safe-integer number, or a decimal string. */
export type Int64 = bigint | number | string;
export type Durability = "bindings" | "collisions";
/** Options of `new PidMapper`; unknown keys are an error. */
export interface MapperOptions {
  durability?: Durability;
  /** Idle time after which expire() drops a binding (default one day); null = default. */
  producerExpirationMs?: Int64 | null;
  /** The trust declaration: for each direct source, the origin clusters it may carry. */
  origins?: Record<string, string[]> | null;
  /** Most bindings held (default 1000000); beyond it new identities throw CapacityExceeded. */
  maxBindings?: Int64 | null;
  /** Most distinct source cluster IDs (default 10000). */
  maxClusters?: Int64 | null;
  /** Most bytes of source cluster IDs together (default 1048576). */
  maxClusterIdBytes?: Int64 | null;
}
/** Options of `rewriteBatches`; unknown keys are an error. */
export interface RewriteOptions {
  /** Verify each batch's CRC first. */
  strictCrc?: boolean;
  /** The input ends on a batch boundary (a truncated tail is an error). */
  complete?: boolean;
  /** `false`: leave `batches` empty. A host that forwards the bytes and records never reads
   * the outcomes, and each costs a copy; `true` (the default) describes every batch. */
  outcomes?: boolean;
}
/** A __mirror_state record's bytes; value null is a tombstone. */
export interface RecordBytes {
  key: Uint8Array;
  value: Uint8Array | null;
}
export interface Collision extends RecordBytes {
  collidingClusterId: string;
}
export interface MapResult {
  mapped: bigint;
  salt: number | null;
  collision: Collision | null;
  /** Make it durable, then confirm(). Set while the binding is pending. */
  record: RecordBytes | null;
  snapshotRequired: boolean;
}
export interface BatchOutcome {
  offset: number;
  baseOffset: bigint;
  originalPid: bigint;
  mappedPid: bigint;
  salt: number | null;
  transactional: boolean;
  control: "commit" | "abort" | "other" | null;
}
export interface RewriteResult {
  /** The rewritten bytes: a new array from `rewriteBatches`, the caller's own from `rewriteBatchesInPlace`. */
  bytes: Uint8Array;
  consumed: number;
  records: RecordBytes[];
  snapshotRequired: boolean;
  /** One outcome per batch (none with `outcomes: false`); built when first read (forwarding bytes and records costs no per-batch object). */
  batches: BatchOutcome[];
}
export type LoadResult =
  | { outcome: "skipped" }
  /** `undeclared`: the record binds a mirrored PID its source is not
   * declared to carry (`origins`); loaded all the same, reported so a host
   * can count or alert on records that get past the declaration. */
  | { outcome: "bound"; mapped: bigint; evicted: number; undeclared: boolean }
  | { outcome: "deleted"; existed: boolean };
export interface Binding {
  sourceClusterId: string;
  pid: bigint;
  mapped: bigint;
  salt: number;
  lastSeenMs: bigint | null;
  transactionOpen: boolean;
  recorded: boolean;
  pending: boolean;
}
export interface PidInfo {
  pid: bigint;
  space: "noProducer" | "local" | "outOfRange" | "mirrored";
  region: number | null;
  pid40: bigint | null;
}
/** One way a cluster's producers carry a region (`regionOwners`): its own at a salt, or mirrored from it and re-salted. */
export interface RegionOwner {
  cluster: string;
  salt: number;
  via: "local" | "mirrored";
}
/** The JSON form of a record (docs/FORMAT.md): 64-bit integers as decimal strings, the salt (0 to 63) a number. */
export interface RecordJson {
  key: { topicId: string; partition: number; sourceClusterId: string; originalPid: string };
  value: { salt: number; collidingClusterId: string; timestampMs: string } | null;
}
export interface Corruption {
  sharedPids: number;
  wrongSequenceAccepted: number;
  lowerEpochAccepted: number;
  foreignMarker: number;
  psmBypass: number;
  /** Local writes Kafka acknowledged and did not write (taken for another producer's retries). */
  lostAsDuplicate: number;
  /** Copies by a second path written again (follower appends are not deduplicated). */
  writtenTwice: number;
  total: number;
}
/** Appends Kafka refused (loud): local writes lost to an error, or a mirror stalled. */
export interface Refusals {
  outOfOrderSequence: number;
  invalidProducerEpoch: number;
  invalidTxnState: number;
  total: number;
}
export interface PerStrategy<T> {
  verbatim: T;
  kip: T;
  mirrorpid: T;
}
/** The most a scenario may have, and the work budget of one run. */
export interface SimulatorLimits {
  clusters: number;
  links: number;
  producers: number;
  events: number;
  count: number;
  deliveries: number;
}
/** One entry of a partition's producer state (Kafka's ProducerStateManager, modelled). */
export interface ProducerStateEntry {
  pid: string;
  /** The true producer of the last batch the entry took. */
  producer: string;
  /** Every true producer that wrote with this PID here (two or more: shared). */
  producers: string[];
  epoch: number;
  lastSequence: number;
  openTransaction: string | null;
}
export type CorruptionKind =
  | "sharedPids"
  | "wrongSequenceAccepted"
  | "lowerEpochAccepted"
  | "foreignMarker"
  | "psmBypass"
  | "lostAsDuplicate"
  | "writtenTwice"
  | "outOfOrderSequence"
  | "invalidProducerEpoch"
  | "invalidTxnState";
export type Strategy = "verbatim" | "kip" | "mirrorpid";
/** The simulator's report (JSON form: 64-bit integers as decimal strings). */
export interface SimulationReport {
  name: string;
  partitions: {
    cluster: string;
    writable: boolean;
    sources: string[];
    batches: number;
    identities: {
      source: string;
      pid: string;
      producers: string[];
      mapped: string;
      mappedHex: string;
      region: number;
      pid40: string;
      salt: number;
      collidingCluster: string | null;
    }[];
    corruption: PerStrategy<Corruption>;
    refusals: PerStrategy<Refusals>;
    /** Copies by a second path the host dropped (mirrorpid's loop only). */
    duplicates: PerStrategy<number>;
    producerState: PerStrategy<ProducerStateEntry[]>;
    records: { keyHex: string; valueHex: string | null; json: RecordJson }[];
  }[];
  paths: {
    producer: string;
    cluster: string;
    hops: { cluster: string; distance: number; pid: PerStrategy<string> }[];
  }[];
  /** Every link that existed during the run, with the PID each producer carried across it last. */
  links: {
    from: string;
    to: string;
    active: boolean;
    crossings: { producer: string; pid: PerStrategy<string> }[];
  }[];
  totals: PerStrategy<Corruption>;
  refused: PerStrategy<Refusals>;
  /** One step per event: what happened, the totals after it, the corruptions it caused in words. */
  timeline: {
    text: string;
    totals: PerStrategy<number>;
    /** Refusals over all partitions after it (loud; not in `totals`). */
    refused: PerStrategy<number>;
    incidents: { strategy: Strategy; cluster: string; kind: CorruptionKind; text: string }[];
    /** Incidents beyond the 20 said in words (refusals are incidents too; see `kind`). */
    unsaid: number;
  }[];
}
/** A fleet's cluster IDs checked for shared salt-0 regions (`planClusters`). */
export interface ClusterPlan {
  clusters: { id: string; region: number }[];
  sharedRegions: { region: number; clusters: string[] }[];
  /** The chance that some two of this many random cluster IDs share a region. */
  sharedRegionProbability: number;
}
