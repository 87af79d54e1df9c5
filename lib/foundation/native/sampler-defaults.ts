// The sampler's settings when nothing has configured it: the one place they are written (the native core only
// bounds what it is given). docs/rules/signals.md explains each.

export const SAMPLER_DEFAULTS = Object.freeze({
  /** CPU sampling interval, ms. */
  cpuInterval: 500,
  /** Event-loop sampling interval, ms. */
  loopInterval: 50,
  /** CPU EMA decay per sample: `cpu = cpu * 0.95 + sample * 0.05`. */
  cpuDecay: 0.95,
  /** Event-loop EMA decay per sample: a saturated loop reads over 800 within about 400 ms. */
  loopDecay: 0.75,
  /** While every loop is nearly idle, the loop interval stretches by this factor (wakeups are the sampler's cost). */
  idleStretch: 4,
})
