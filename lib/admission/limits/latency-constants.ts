// The latency controller's constants (docs/rules/latency.md), each with the reason for its value.

/**
 * Steps per bucket: the controller decides this often whether to shed (requests in flight change faster than buckets
 * complete); the gradient moves the limit once per bucket.
 */
export const STEPS_PER_BUCKET = 4
/**
 * Inflation under this many ms never counts, whatever the share: a handler answering in microseconds doubles its
 * time on a garbage collection or a busy loop tick without any queue downstream.
 */
export const MIN_TOLERANCE_MS = 2
/** Steps over which the requests in flight must surge before shedding starts. */
export const SURGE_STEPS = 1
/** Buckets a slower growth must last (with the requests in flight not back under where they were). */
export const SLOW_GROWTH_BUCKETS = 5
/** A step gap in which this many completions were due is a pause of the gateway, not a lull in traffic. */
export const PAUSED_COMPLETIONS = 4
/** Steps in a row without inflation before shedding stops (5 buckets). */
export const EXIT_CALM = 5 * STEPS_PER_BUCKET
/** Bounds on one bucket's gradient: at most halve, at most double the limit. */
export const MIN_GRADIENT = 0.5
export const MAX_GRADIENT = 2
/** The limit is held to this multiple of the requests actually in flight (it cannot grow while unused). */
export const USE_FACTOR = 2
/** The limit holds requests back when those in flight reach this share of it. */
export const PRESSED = 0.8
/** A probe holds requests in flight to this share of what the base says the upstream serves without a queue. */
export const PROBE_SHARE = 0.65
/** A probe whose upstream completes this share of its rate before the probe did not drain its queue. */
export const SATURATED = 0.95
/** The upstream changed (measure the base now) when its response time rises or its rate falls this much. */
export const RT_JUMP = 1.5
export const RATE_DROP = 0.7
/** The anchors are moving averages of the response time and rate, each step weighing this much. */
export const ANCHOR_WEIGHT = 0.1
/** Response times a probe measures (it reads buckets after its wait until it has them). */
export const PROBE_SAMPLES = 12
/** A probe confirms the base when it lands within this share of it. */
export const CONFIRM = 0.2
/** The gap between probes doubles up to this many probeIntervals while they confirm the base. */
export const MAX_GAP_FACTOR = 32
