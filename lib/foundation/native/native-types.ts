// The shape of the native addon's exports (native/binding/*.cc). Only lib/ talks to it.

export interface RegionLayoutOffsets {
  magic: number
  /** The layout version this build writes (the value; its offset is `versionOffset`). */
  version: number
  versionOffset: number
  totalSize: number
  state: number
  generation: number
  memberCapacity: number
  memberHighWater: number
  payloadOffset: number
  createdAt: number
  attachCount: number
  kind: number
  kindSize: number
  fingerprint: number
  fingerprintSize: number
  headerSize: number
  memberSlotSize: number
  memberPid: number
  memberThread: number
  maxMemberCapacity: number
  maxReclaim: number
}

export interface WindowLayoutOffsets {
  bucketSize: number
  tag: number
  count: number
  sum: number
}

export interface SignalsLayoutOffsets {
  cpuEma: number
  cpuRaw: number
  cores: number
  source: number
  cpuSamples: number
  loopTicks: number
  reaped: number
  running: number
  cpuInterval: number
  loopInterval: number
  cpuDecay: number
  loopDecay: number
  processNow: number
  memoryUsage: number
  memoryUsed: number
  memoryLimit: number
  resident: number
  memorySource: number
  memorySamples: number
  loopSlots: number
  loopSlotSize: number
  maxLoops: number
  loopNow: number
  loopElu: number
  loopDelay: number
  loopDelayRaw: number
  loopEluRaw: number
  loopActive: number
  loopTickAt: number
  loopDelayMin: number
  loopPollAt: number
  size: number
}

/** The keyed table's slot format and bounds (native/core/keyed/keyed_layout.h, docs/rules/keyed-table.md). */
export interface KeyedLayoutConstants {
  slotSize: number
  tagWord: number
  checkWord: number
  stateWord: number
  epochWord: number
  slotWords: number
  bucketSlots: number
  slotsPerKey: number
  maxBuckets: number
  maxKeys: number
  ruleHeadroom: number
  maxTicksPerMs: number
  maxTau: number
  maxDebt: number
  epochShift: number
  freshEpochs: number
  epochSkew: number
  returning: number
  countBits: number
  rescans: number
  claimSpins: number
  claimBreakMs: number
  protocolVersion: number
  casTries: number
  heavyEntries: number
  heavyEntrySize: number
  heavyWords: number
  heavyTextUnits: number
}

/** The sampler's settings as the native side takes them (ms and decays per sample). */
export interface SamplerSettings {
  cpuInterval?: number
  loopInterval?: number
  cpuDecay?: number
  loopDecay?: number
  idleStretch?: number
}

export interface NativeRegionSpec {
  /** The component's name; the region is listed as `<kind>.<name>`. */
  name: string
  kind: string
  fingerprint: string
  memberCapacity: number
  payloadSize: number
  /** Flat pairs: payload offset of member 0's f64 cell, stride in bytes. */
  reclaim: number[]
  /** Flat pairs: payload offset of an f64 cell, initial value. */
  init: number[]
}

export interface NativeRegion {
  buffer: ArrayBuffer
  handle: number
  member: number
  payloadOffset: number
  created: boolean
  rebuilt: boolean
}

export interface NativeMember {
  slot: number
  pid: number
  threadId: number
  alive: boolean
}

export interface NativeLoadInfo {
  source: 'host' | 'cgroup-v1' | 'cgroup-v2'
  cores: number
  quotaCores: number
  cpusetCpus: number
  affinityCpus: number
  cgroupPath: string
  usagePath: string
  note: string
  /** The memory source (native/core/memory/cgroup_memory.h); absent from CpuReader's info. */
  memory?: NativeMemoryInfo
}

/** Where memory figures come from: the cgroup the reader found (or the host), and what it ignored. */
export interface NativeMemoryInfo {
  source: 'host' | 'cgroup-v1' | 'cgroup-v2'
  cgroupPath: string
  usagePath: string
  note: string
}

export interface HeavyKeeperLayoutSizes {
  controlSize: number
  bucketSize: number
  laneHeaderSize: number
  slotSize: number
  inlineKey: number
  prefixBytes: number
}

export interface NativeHeavyKeeperConfig {
  k: number
  width: number
  depth: number
  decay: number
  minCount: number
  seed: number
  shared: boolean
  /** The region payload: every offset below is relative to it. */
  view: Uint8Array
  controlOffset: number
  sketchOffset: number
  aliveOffset: number
  aliveStride: number
  lanesOffset: number
  laneStride: number
  member: number
  laneCapacity: number
  /** A local keeper's JavaScript front (lib/components/hotkeys/heavy-keeper-front.ts), if any. */
  front?: Uint8Array
}

export interface NativeListedKey {
  key: string | Uint8Array
  count: number
  truncated?: boolean
}

export interface NativeHeavyKeeper {
  /** Bit 0: in the top-k; bit 1: expelled keys waiting. -1: bad key, -2: bad incr. */
  add(key: unknown, incr: unknown): number
  /** Keys left in the top-k, or -1 - i when keys[i] is not a key (keys before it were added). */
  addMany(keys: unknown[], incr: number): number
  count(key: unknown): number
  list(lanes: number): NativeListedKey[]
  total(lanes: number): number
  fading(): void
  fadeOnce(epoch: number): boolean
  collectExpelled(on: boolean): void
  takeExpelled(): NativeListedKey[]
  /** Compare-and-swap loops on the shared sketch this member gave up (raw_atomic.h's bound). */
  contentionTimeouts(): number
}

/** The memory a local HeavyKeeper shares with its JavaScript front (native/core/hotkeys/heavy_keeper_front.h). */
export interface HeavyKeeperFrontLayout {
  /** u32 word indexes of the header. */
  dirtyCountWord: number
  seenWord: number
  lastSlotWord: number
  lastFingerprintWord: number
  lastEstimateWord: number
  entriesOffsetWord: number
  /** Byte offsets: the f64 pending total and heap threshold, the random state, native code's decay table. */
  pendingTotalOffset: number
  thresholdOffset: number
  randomOffset: number
  decayOffset: number
  decayTableSize: number
  headerSize: number
  /** The entries start at a multiple of this many bytes. */
  entryAlign: number
  /** An entry's u32 words, and the index of each field in it. */
  entryWords: number
  entryEpoch: number
  entryLearned: number
  entryFingerprint: number
  entryBuckets: number
  entryPending: number
  /** Rows an entry holds a bucket of: the deepest sketch the front serves. */
  entryRows: number
}

export interface NativeBinding {
  napiVersion: number
  layout: {
    region: RegionLayoutOffsets
    window: WindowLayoutOffsets
    signals: SignalsLayoutOffsets
    keyed: KeyedLayoutConstants
    heavyKeeperFront: HeavyKeeperFrontLayout
  }
  setThreadId(threadId: number): void
  regionOpen(spec: NativeRegionSpec): NativeRegion
  regionClose(handle: number): void
  /** A private view of a region that does not join it, with its member table at the time of the view. */
  regionSnapshot(name: string): { buffer: ArrayBuffer; members: NativeMember[] }
  regionMembers(handle: number): NativeMember[]
  regionList(): string[]
  regionUnlink(name: string): void
  /** Where a region lives: a file path, or an object name on Windows. */
  regionLocation(name: string): string
  regionRemoveIfStale(name: string): boolean
  signals(): { buffer: ArrayBuffer; loopSlot: number }
  /** This thread uses the sampler until it ends; the defaults apply if nothing has configured it yet. */
  samplerStart(defaults: Readonly<Required<SamplerSettings>>): void
  samplerConfigure(options: SamplerSettings & { cgroupRoot?: string }): void
  loadInfo(): NativeLoadInfo
  monotonicNow(): number
  HeavyKeeper: new (config: NativeHeavyKeeperConfig) => NativeHeavyKeeper
  heavyKeeperLayout: HeavyKeeperLayoutSizes
  murmur3(key: unknown, seed: number): number
  /** Two random unsigned 32-bit words (never both 0): a new keyed table's secret seed. */
  keyedSeed(): [number, number]
}
