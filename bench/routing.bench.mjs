// Gray routing (docs/readme/integrations.md, "Gray routing"): ns per GrayRouter.route() with 1, 8 and 64 rules, on
// a node-shaped request (lower-case header object) that the last rule matches (every rule's terms are tried first)
// and on one no rule matches (the fallback). Shared regions, as a gateway's routers are. No peer: no Node library
// routes by live rules in process (Envoy's and nginx's are proxies, another process and another cost).
import { createRequire } from 'module'
import { do_not_optimize, measure } from './harness.mjs'

const require = createRequire(import.meta.url)
const { GrayRouter } = require('../dist/cjs')

const closing = []
/** A router whose `count` rules each need a header and a path prefix, the last also a cookie. */
function router(count) {
  const rules = Array.from({ length: count }, (_, i) => ({
    when: `header(x-version) = v${i + 2} && path ^= /api/${i === count - 1 ? ' && cookie(track) = beta' : ''}`,
    group: 'v2',
  }))
  const r = new GrayRouter({
    shared: `bench-routing-${count}-${process.pid}`,
    groups: ['stable', 'v2'],
    fallback: 'stable',
    rules,
  })
  closing.push(r)
  return r
}
const request = (version) => ({
  method: 'GET',
  url: '/api/cart?item=42',
  rawHeaders: [],
  headers: { host: 'shop.example', 'user-agent': 'bench', cookie: 'session=abc; track=beta', 'x-version': version },
})
const weighted = new GrayRouter({
  shared: `bench-routing-weight-${process.pid}`,
  groups: ['stable', 'v2'],
  fallback: 'stable',
  rules: [{ when: 'header(x-version) = v2 && weight = 30', group: 'v2' }],
})
closing.push(weighted)

const cases = []
for (const count of [1, 8, 64]) {
  const r = router(count)
  const last = request(`v${count + 1}`)
  const none = request('v1')
  cases.push({
    name: `${count} rules: the last matches`,
    fn: () => do_not_optimize(r.route(last)),
    baseline: count === 1,
  })
  cases.push({ name: `${count} rules: none matches`, fn: () => do_not_optimize(r.route(none)) })
}
const v2 = request('v2')
let user = 0
cases.push({ name: '1 rule, weight 30, random', fn: () => do_not_optimize(weighted.route(v2)) })
cases.push({ name: '1 rule, weight 30, keyed', fn: () => do_not_optimize(weighted.route(v2, `user-${user++ & 1023}`)) })
await measure('Gray routing: GrayRouter.route()', cases, {
  note: 'No peer. The last rule matches: every rule before it is tried. Keyed: a user id string of 6-9 characters.',
})
for (const r of closing) r.close()
