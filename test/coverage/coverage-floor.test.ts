// The coverage floors (scripts/coverage/floor.mjs): a run under any floor fails, and raising never lowers a floor.
import { describe, expect, it } from 'vitest'

type Measures = Record<string, Record<string, number>>
interface FloorModule {
  shortfalls(measured: Measures, floor: Measures): string[]
  raised(measured: Measures, floor: Measures): Measures
  readFloor(): Measures
}
const load = async (): Promise<FloorModule> =>
  (await import('../../scripts/coverage/floor.mjs' as string)) as FloorModule

const floor = { typescript: { lines: 90, branches: 80 }, native: { lines: 70 } }

describe('coverage floors', () => {
  it('pass at or above every floor, and name each measure under its floor', async () => {
    const { shortfalls } = await load()
    expect(shortfalls({ typescript: { lines: 90, branches: 85 }, native: { lines: 70.01 } }, floor)).toEqual([])
    expect(shortfalls({ typescript: { lines: 89.99, branches: 85 }, native: { lines: 71 } }, floor)).toEqual([
      'typescript lines: 89.99 % is under its floor of 90 %',
    ])
    expect(shortfalls({ typescript: { lines: 95, branches: 85 } }, floor)).toEqual([
      'native lines: not measured (floor 70 %)',
    ])
  })

  it('rise to what was measured less half a point (the noise between runs), and never fall', async () => {
    const { raised } = await load()
    const measured = { typescript: { lines: 91.56, branches: 79 }, native: { lines: 75.08 } }
    expect(raised(measured, floor)).toEqual({ typescript: { lines: 91, branches: 80 }, native: { lines: 74.5 } })
    expect(floor.typescript.lines).toBe(90) // the floor given is left as it was
  })

  it('the checked-in floors name every measure the coverage run reports', async () => {
    const { readFloor } = await load()
    const checkedIn = readFloor()
    expect(Object.keys(checkedIn.typescript).sort()).toEqual(['branches', 'functions', 'lines', 'statements'])
    expect(Object.keys(checkedIn.native).sort()).toEqual(['functions', 'lines'])
  })
})
