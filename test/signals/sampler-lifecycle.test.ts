// The sampler thread's lifecycle when only worker threads use it: the last user detaching while another attaches
// must neither start a second thread that the first one's join waits on forever, nor lose the thread.
import { spawnSync } from 'child_process'
import * as path from 'path'
import { describe, expect, it } from 'vitest'

const fixture = path.join(__dirname, '..', 'fixtures', 'sampler-churn.cjs')

describe('the sampler thread, handed from worker to worker', () => {
  it('survives 200 rounds of its last user ending while the next one starts (no hung join, no second thread)', () => {
    // Before the fix a round hung within about 30 to 60 rounds here: the ending worker's join never returned.
    const r = spawnSync(process.execPath, [fixture, '200'], { encoding: 'utf8', timeout: 170_000 })
    expect(r.stdout.trim()).toBe('done 200')
    expect(r.status).toBe(0)
  }, 180_000)
})
