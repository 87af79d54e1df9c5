// The work the peers benchmarks guard, the same on both sides: a synchronous function and an async one, and the
// two reactions of the `.then` floor.
let sink = 0
export const work = () => ++sink
export const asyncWork = async () => ++sink
export const onOk = (v) => v
export const onErr = (e) => {
  throw e
}
