// The fleet view shipped in ops/ (docs/readme/observability.md): Prometheus alerting rules and a Grafana dashboard.
// Every metric they name must be one the catalogue exports, with labels it has; promtool checks the rules, runs
// their unit tests (ops/prometheus/bulwark-alerts.test.yml) and parses every dashboard query. .ci/run installs
// promtool; elsewhere the promtool tests skip unless BULWARK_REQUIRE_PROMTOOL=1.
import { spawnSync } from 'child_process'
import * as fs from 'fs'
import * as os from 'os'
import * as path from 'path'
import { describe, expect, it } from 'vitest'

import { METRICS, prometheusName } from '../../lib/ops/metrics/metric-catalog'

const root = path.join(__dirname, '..', '..')
const rulesFile = path.join(root, 'ops', 'prometheus', 'bulwark-alerts.yml')
const rulesText = fs.readFileSync(rulesFile, 'utf8')
const dashboard = JSON.parse(fs.readFileSync(path.join(root, 'ops', 'grafana', 'bulwark.json'), 'utf8'))
const queries: string[] = dashboard.panels.flatMap((p: { targets?: Array<{ expr: string }> }) =>
  (p.targets ?? []).map((t) => t.expr),
)

const catalog = new Map(METRICS.map((spec) => [prometheusName(spec, 'bulwark_'), spec]))
/** Labels Prometheus adds to every series it scrapes. */
const TARGET_LABELS = ['job', 'instance']

/** Each bulwark metric `text` names, with the labels its selectors match on (`name{a="x", b=~"y"}`). */
function namedMetrics(text: string): Array<{ metric: string; labels: string[] }> {
  const named = [...text.matchAll(/\b(bulwark_[a-z0-9_]+)(\{[^}]*\})?/g)]
  return named.map(([, metric, selector]) => ({
    metric,
    labels: [...(selector ?? '').matchAll(/([a-zA-Z_]+)\s*(?:=~|!~|!=|=)/g)].map((m) => m[1]),
  }))
}

function unknownNames(text: string): string[] {
  const wrong: string[] = []
  for (const { metric, labels } of namedMetrics(text)) {
    const spec = catalog.get(metric)
    if (spec === undefined) wrong.push(metric)
    for (const label of labels)
      if (spec !== undefined && !TARGET_LABELS.includes(label) && !(spec.labels as string[]).includes(label))
        wrong.push(`${metric}{${label}}`)
  }
  return wrong
}

describe('the fleet view: alerting rules and dashboard', () => {
  it('name only metrics of the catalogue, with their own labels', () => {
    expect(namedMetrics(rulesText).length).toBeGreaterThan(10)
    expect(unknownNames(rulesText)).toEqual([])
    expect(queries.length).toBeGreaterThan(15)
    for (const query of queries) expect(namedMetrics(query).length, query).toBeGreaterThan(0)
    expect(unknownNames(queries.join('\n'))).toEqual([])
    // The check itself: a name or label the catalogue lacks is reported.
    expect(unknownNames('rate(bulwark_limiter_sheds_total[5m]) + bulwark_breaker_state{colour="red"}')).toEqual([
      'bulwark_limiter_sheds_total',
      'bulwark_breaker_state{colour}',
    ])
  })

  it('alert on what an on-call engineer needs, each with a summary and a severity', () => {
    const alerts = [...rulesText.matchAll(/- alert: (\w+)/g)].map((m) => m[1])
    expect(alerts).toEqual(
      expect.arrayContaining([
        'BulwarkShedding',
        'BulwarkBreakerOpen',
        'BulwarkShadowWouldShed',
        'BulwarkRulesStale',
        'BulwarkRulesSourceDown',
        'BulwarkRulesRefused',
        'BulwarkRulesVersionSkew',
      ]),
    )
    expect(rulesText.match(/summary:/g)?.length).toBe(alerts.length)
    expect(rulesText.match(/severity:/g)?.length).toBe(alerts.length)
  })

  it('is a dashboard Grafana imports: a uid, a data source variable, panels that do not overlap', () => {
    expect(dashboard).toMatchObject({ uid: 'bulwark-overview', schemaVersion: expect.any(Number) })
    expect(dashboard.templating.list.map((v: { name: string }) => v.name)).toEqual(['datasource', 'job', 'instance'])
    const taken = new Set<string>()
    for (const { gridPos: g } of dashboard.panels as Array<{ gridPos: Record<string, number> }>) {
      expect(g.x + g.w).toBeLessThanOrEqual(24)
      for (let x = g.x; x < g.x + g.w; x++)
        for (let y = g.y; y < g.y + g.h; y++) {
          expect(taken.has(`${x},${y}`), `cell ${x},${y}`).toBe(false)
          taken.add(`${x},${y}`)
        }
    }
  })
})

const promtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' }).status === 0
const required = process.env.BULWARK_REQUIRE_PROMTOOL === '1'

describe.skipIf(!promtool && !required)('the fleet view under promtool', () => {
  const run = (args: string[], cwd = root) => {
    const result = spawnSync('promtool', args, { cwd, encoding: 'utf8' })
    return { status: result.status, output: `${result.stdout}${result.stderr}` }
  }

  it('promtool check rules: the alerting rules are valid', () => {
    expect(promtool, 'promtool is not installed (apt-get install prometheus)').toBe(true)
    expect(run(['check', 'rules', rulesFile])).toMatchObject({ status: 0, output: expect.stringMatching(/SUCCESS/) })
  })

  it("promtool test rules: the alerts fire on bulwark's series, and not before", () => {
    expect(run(['test', 'rules', 'bulwark-alerts.test.yml'], path.dirname(rulesFile))).toMatchObject({ status: 0 })
  })

  it("every dashboard query parses, with Grafana's variables given values", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-dashboard-'))
    try {
      const rules = queries.map((query, i) => {
        const expr = query.replace(/\$__rate_interval/g, '5m').replace(/\$(job|instance)/g, '.*')
        return `      - record: dashboard:query_${i}\n        expr: ${JSON.stringify(expr)}`
      })
      const file = path.join(dir, 'queries.yml')
      fs.writeFileSync(file, `groups:\n  - name: dashboard\n    rules:\n${rules.join('\n')}\n`)
      expect(run(['check', 'rules', file])).toMatchObject({ status: 0, output: expect.stringMatching(/SUCCESS/) })
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
