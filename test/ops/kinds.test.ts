// One descriptor per component kind (lib/ops/kinds/component-kinds.ts): the registry, the exporters' samplers, top's
// inspectors, set's attachers and the public names all follow it. The tables keyed by it are checked when compiled;
// what only runs can tell is checked here.
import { describe, expect, it } from 'vitest'
import '../../lib/index'
import '../../lib/entries/fleet'
import '../../lib/entries/http'
import '../../lib/entries/redis'
import { registeredKinds } from '../../lib/foundation/common/component-registry'
import { COMPONENT_KINDS, EXPORTED_KINDS, EXPORTED_NAMES } from '../../lib/ops/kinds/component-kinds'
import { SAMPLERS } from '../../lib/ops/metrics/component-samplers'
import { publicNames } from '../exports/public-names'

describe('the component kinds', () => {
  it('are the classes the components register, each once, and only those', () => {
    expect([...registeredKinds()].sort()).toEqual(EXPORTED_KINDS.map((k) => k.name).sort())
  })

  it('each have a sampler when exported, and every name is public', () => {
    expect(Object.keys(SAMPLERS).sort()).toEqual(EXPORTED_KINDS.map((k) => k.name).sort())
    const everyPublicName = new Set(Object.values(publicNames).flat())
    for (const kind of COMPONENT_KINDS) expect(everyPublicName.has(kind.name), kind.name).toBe(true)
  })

  it('name every exported kind in the exporters’ refusal, the most specific first', () => {
    expect(EXPORTED_NAMES).toMatch(/^a BbrLimiter, an inbound guard, .* or a RulesFollower$/)
    for (const kind of EXPORTED_KINDS) expect(EXPORTED_NAMES).toContain(kind.named)
    const names = COMPONENT_KINDS.map((k) => k.name)
    expect(new Set(names).size).toBe(names.length)
    const regions = COMPONENT_KINDS.flatMap((k) => k.regions)
    expect(new Set(regions).size).toBe(regions.length)
  })
})
