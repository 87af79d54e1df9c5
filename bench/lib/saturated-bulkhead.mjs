// An AdaptiveBulkhead of a `bulwark` build (`b`, the module) whose upstream is saturated, for the benchmarks that time
// its refusal: a simulated upstream (8 slots, 20 ms a call: 400 calls/s) offered three times that for 3 s on a clock
// that then stands still, so the bulkhead stays where it is: shedding, its limit full. The calls it admitted stay in
// flight.
export function saturatedBulkhead(b, shared) {
  let time = 1000
  const bulkhead = new b.AdaptiveBulkhead({ shared, now: () => time })
  const running = [] // { done, token } of the calls the upstream serves, at most 8
  const waiting = [] // tokens of the admitted calls queued at the upstream
  const end = time + 3000
  for (let arrival = time; arrival < end; arrival += 1000 / 1200) {
    // Completions due before this arrival first, each at its own time.
    running.sort((x, y) => x.done - y.done)
    while (running.length > 0 && running[0].done <= arrival) {
      const call = running.shift()
      time = call.done
      bulkhead.release(call.token)
      if (waiting.length > 0) running.push({ done: time + 20, token: waiting.shift() })
    }
    time = arrival
    const token = bulkhead.tryAcquire()
    if (token < 0) continue
    if (running.length < 8) running.push({ done: time + 20, token })
    else waiting.push(token)
  }
  for (let held = 0; held < 1000 && bulkhead.tryAcquire() >= 0; held++);
  if (bulkhead.tryAcquire() >= 0) throw new Error('the simulated upstream did not saturate the bulkhead')
  return bulkhead
}
