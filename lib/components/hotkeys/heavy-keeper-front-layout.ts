import { native } from '../../foundation/native/load-native'

/**
 * The front's memory, laid out by native code (native/core/hotkeys/heavy_keeper_front.h), which exports every
 * offset: u32 header words [dirty count, seen generation, last slot, last fingerprint, last estimate, entries
 * offset], the f64 pending total and heap threshold (its minimum count when full, else -1), the random state,
 * native code's decay probabilities, the last add's buckets, the dirty list, then one entry per key from an aligned
 * offset.
 */
export const FRONT_LAYOUT = native.layout.heavyKeeperFront
const LAYOUT = FRONT_LAYOUT
/** The front serves sketches of at most this many rows (the default and the hot-key cache have 4). */
export const FRONT_MAX_DEPTH = LAYOUT.entryRows

/**
 * add(), ownedMax(), raiseOwned() and drawUniform() write these indexes as literals: V8 inlines a function only
 * while its bytecode stays small (460 bytes in Node 20), and a constant's name costs bytes where a literal does not.
 * Checked against native code's layout when this module loads: a HeavyKeeper serves no key from a front whose
 * layout disagrees (native code does every add), so a build that mixes versions stays correct.
 */
export const FRONT_LITERALS_AGREE =
  LAYOUT.dirtyCountWord === 0 &&
  LAYOUT.pendingTotalOffset === 3 * 8 &&
  LAYOUT.thresholdOffset === 4 * 8 &&
  LAYOUT.randomOffset === 10 * 4 &&
  LAYOUT.entryWords === 8 &&
  LAYOUT.entryEpoch === 0 &&
  LAYOUT.entryLearned === 1 &&
  LAYOUT.entryFingerprint === 2 &&
  LAYOUT.entryBuckets === 3 &&
  LAYOUT.entryPending === 7 &&
  FRONT_MAX_DEPTH === 4
