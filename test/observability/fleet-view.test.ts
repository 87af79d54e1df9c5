// The fleet's view (monitoring/): the Prometheus alerting rules pass `promtool check rules`, fire on the series an
// on-call engineer must hear about and stay quiet otherwise (`promtool test rules`), and every metric they and the
// Grafana dashboard query is one the exporters write (lib/ops/metrics/metric-catalog.ts). promtool as in
// promtool.test.ts: .ci/run installs it; elsewhere these tests skip unless BULWARK_REQUIRE_PROMTOOL=1.
import { spawnSync } from 'child_process'
import * as fs from 'fs'
import * as os from 'os'
import * as path from 'path'
import { afterAll, describe, expect, it } from 'vitest'

import { METRICS, prometheusName } from '../../lib/ops/metrics/metric-catalog'

const monitoring = path.join(__dirname, '..', '..', 'monitoring')
const alerts = path.join(monitoring, 'bulwark-alerts.yml')
const dashboard = JSON.parse(fs.readFileSync(path.join(monitoring, 'bulwark-fleet-dashboard.json'), 'utf8')) as {
  panels: Array<{ title: string; targets: Array<{ expr: string }> }>
  templating: { list: Array<{ query?: unknown }> }
}

const available = spawnSync('promtool', ['--version'], { encoding: 'utf8' }).status === 0
const required = process.env.BULWARK_REQUIRE_PROMTOOL === '1'
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-fleet-view-'))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

/** The metric names a PromQL text uses: every `bulwark_...` identifier not followed by a label name's `=`. */
function metricNames(text: string): string[] {
  return [...text.matchAll(/\bbulwark_[a-z_]*[a-z]\b(?!\s*=)/g)].map(([name]) => name)
}

describe('the fleet view’s queries', () => {
  const exported = new Set(METRICS.map((spec) => prometheusName(spec, 'bulwark_')))
  const queries = [
    fs.readFileSync(alerts, 'utf8'),
    ...dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr)),
    ...dashboard.templating.list.map((variable) => String(variable.query ?? '')),
  ]

  it('name only metrics the exporters write', () => {
    const named = new Set(queries.flatMap(metricNames))
    expect([...named].filter((name) => !exported.has(name))).toEqual([])
    // Shedding, breakers and every rules gauge are there: the check above is not passing on an empty list.
    expect([...named]).toEqual(
      expect.arrayContaining([
        'bulwark_limiter_shed_total',
        'bulwark_breaker_state',
        'bulwark_rules_version',
        'bulwark_rules_source_up',
        'bulwark_rules_staleness_seconds',
        'bulwark_rules_refused_total',
        'bulwark_shadow_would_refuse_total',
        'bulwark_shadow_enabled',
      ]),
    )
  })

  it('would catch a metric that does not exist', () => {
    expect(metricNames('rate(bulwark_limiter_shedded_total{name="api", bulwark_x="1"}[1m])')).toEqual([
      'bulwark_limiter_shedded_total',
    ])
    expect(exported.has('bulwark_limiter_shedded_total')).toBe(false)
  })
})

/** Each label a selector of `text` matches on, as `metric{label}`, that the metric does not have. */
function unknownLabels(text: string): string[] {
  const specs = new Map(METRICS.map((spec) => [prometheusName(spec, 'bulwark_'), spec]))
  const wrong: string[] = []
  for (const [, metric, selector] of text.matchAll(/\b(bulwark_[a-z0-9_]+)\{([^}]*)\}/g)) {
    const labels = [...selector.matchAll(/([a-zA-Z_]+)\s*(?:=~|!~|!=|=)/g)].map((m) => m[1])
    const known: readonly string[] = specs.get(metric)?.labels ?? []
    // job and instance: the labels Prometheus adds to every series it scrapes.
    for (const label of labels) if (!['job', 'instance', ...known].includes(label)) wrong.push(`${metric}{${label}}`)
  }
  return wrong
}

describe('the fleet view’s labels and layout', () => {
  const queries = dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr))

  it('match on labels the metrics have (a check that can fail)', () => {
    expect(unknownLabels([fs.readFileSync(alerts, 'utf8'), ...queries].join('\n'))).toEqual([])
    expect(unknownLabels('bulwark_breaker_state{state="open", colour="red"}')).toEqual([
      'bulwark_breaker_state{colour}',
    ])
  })

  it('lays the dashboard out on Grafana’s 24 columns, no two panels on one cell', () => {
    const taken = new Set<string>()
    for (const { gridPos: g } of dashboard.panels as unknown as Array<{ gridPos: Record<string, number> }>) {
      expect(g.x + g.w).toBeLessThanOrEqual(24)
      for (let x = g.x; x < g.x + g.w; x++)
        for (let y = g.y; y < g.y + g.h; y++) {
          expect(taken.has(`${x},${y}`), `cell ${x},${y}`).toBe(false)
          taken.add(`${x},${y}`)
        }
    }
  })
})

describe.skipIf(!available && !required)('promtool', () => {
  it('checks the alerting rules', () => {
    expect(available, 'promtool is not installed (apt-get install prometheus)').toBe(true)
    const check = spawnSync('promtool', ['check', 'rules', alerts], { encoding: 'utf8' })
    expect({ status: check.status, output: check.stdout.trim() }).toEqual({
      status: 0,
      output: expect.stringContaining('SUCCESS: 10 rules found'),
    })
  })

  it("parses every dashboard query, Grafana's variables given values", () => {
    const queries = dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr))
    const rules = queries.map((query, i) => {
      const expr = query.replace(/\$__rate_interval/g, '5m').replace(/\$\{?(job|instance)\}?/g, '.*')
      return `      - record: dashboard:query_${i}\n        expr: ${JSON.stringify(expr)}`
    })
    const file = path.join(dir, 'queries.yml')
    fs.writeFileSync(file, `groups:\n  - name: dashboard\n    rules:\n${rules.join('\n')}\n`)
    const check = spawnSync('promtool', ['check', 'rules', file], { encoding: 'utf8' })
    expect({ status: check.status, output: `${check.stdout}${check.stderr}`.trim() }).toMatchObject({ status: 0 })
  })

  it('fires each alert on its series, and not on healthy ones', () => {
    const tests = path.join(dir, 'alerts.test.yml')
    fs.writeFileSync(tests, alertTests())
    const run = spawnSync('promtool', ['test', 'rules', tests], { encoding: 'utf8' })
    expect({ status: run.status, output: `${run.stdout}${run.stderr}`.trim() }).toEqual({
      status: 0,
      output: expect.stringContaining('SUCCESS'),
    })
  })
})

/**
 * promtool's unit tests: two hosts of job gw; one sheds, has a breaker open and lost its rule source, the other took
 * a version late; then both shed.
 */
function alertTests(): string {
  const host = (instance: string) => `job="gw", instance="${instance}"`
  // A host's limiter api: 600 requests admitted per 30 s, `shed` shed (for `reason`).
  const api = (instance: string, reason: string, shed: number) => `
      - series: 'bulwark_limiter_shed_total{${host(instance)}, name="api", priority="low", reason="${reason}"}'
        values: '0+${shed}x20'
      - series: 'bulwark_limiter_admitted_total{${host(instance)}, name="api", priority="low"}'
        values: '0+600x20'`
  return `rule_files: [${JSON.stringify(alerts)}]
evaluation_interval: 30s
tests:
  - interval: 30s
    input_series:${api('a', 'in-flight', 60)}${api('b', 'in-flight', 0)}
      - series: 'bulwark_breaker_state{${host('a')}, name="pay", key="", state="open"}'
        values: '0 0 1x18'
      - series: 'bulwark_breaker_state{${host('b')}, name="pay", key="", state="open"}'
        values: '0x20'
      - series: 'bulwark_rules_source_up{${host('a')}, name="shop"}'
        values: '1 1 0x18'
      - series: 'bulwark_rules_source_up{${host('b')}, name="shop"}'
        values: '1x20'
      - series: 'bulwark_rules_staleness_seconds{${host('a')}, name="shop"}'
        values: '0 30+30x18'
      - series: 'bulwark_rules_staleness_seconds{${host('b')}, name="shop"}'
        values: '0x20'
      - series: 'bulwark_rules_version{${host('a')}, name="shop"}'
        values: '3x20'
      - series: 'bulwark_rules_version{${host('b')}, name="shop"}'
        values: '3x10 4x10'
      - series: 'bulwark_rules_canary{${host('a')}, name="shop"}'
        values: '0x20'
      - series: 'bulwark_rules_canary{${host('b')}, name="shop"}'
        values: '0x20'
    alert_rule_test:
      - eval_time: 5m
        alertname: BulwarkShedding
        exp_alerts:
          - exp_labels: { severity: warning, job: gw, instance: a, name: api, reason: in-flight }
            exp_annotations:
              summary: "a: limiter api sheds (in-flight)"
              description: "2 requests/s shed for over a minute. The host is saturated (in-flight or queue-delay) or its latency rose: check bulwark_limiter_load_ratio and bulwark_limiter_queue_delay_seconds."
      - eval_time: 5m
        alertname: BulwarkSheddingFleetWide
        exp_alerts: []
      - eval_time: 5m
        alertname: BulwarkBreakerOpen
        exp_alerts:
          - exp_labels: { severity: warning, job: gw, instance: a, name: pay }
            exp_annotations:
              summary: "a: breaker pay is open"
              description: "Calls to that dependency fail fast; bulwark_breaker_failure_ratio says why it opened."
      - eval_time: 5m
        alertname: BulwarkRulesSourceDown
        exp_alerts:
          - exp_labels: { severity: warning, job: gw, instance: a, name: shop }
            exp_annotations:
              summary: "a: the rule source of shop does not answer"
              description: "The host keeps its last good rules; a change made at the source does not reach it until the source answers again."
      - eval_time: 5m
        alertname: BulwarkRulesStale
        exp_alerts: []
      - eval_time: 9m
        alertname: BulwarkRulesStale
        exp_alerts:
          - exp_labels: { severity: critical, job: gw, instance: a, name: shop }
            exp_annotations:
              summary: "a: the rules of shop are 9m 0s old"
              description: "The host's watcher has not heard the rule source for five minutes."
      - eval_time: 4m
        alertname: BulwarkRulesVersionsDiffer
        exp_alerts: []
      - eval_time: 11m
        alertname: BulwarkRulesVersionsDiffer
        exp_alerts:
          - exp_labels: { severity: warning, job: gw, name: shop }
            exp_annotations:
              summary: "gw: hosts obey different versions of the rules of shop"
              description: "No canary is running, yet some hosts have not taken the newest version for five minutes."
  - interval: 30s
    input_series:${api('a', 'in-flight', 60)}${api('b', 'queue-delay', 30)}
    alert_rule_test:
      - eval_time: 5m
        alertname: BulwarkSheddingFleetWide
        exp_alerts:
          - exp_labels: { severity: critical, job: gw, name: api }
            exp_annotations:
              summary: "gw: more than half of the hosts shed on api"
              description: "The fleet as a whole is short of capacity, not one host."
  - interval: 30s
    input_series:
      # Two workers of host a report the same host-wide counts; api never went to shadow mode.
      - series: 'bulwark_shadow_enabled{${host('a')}, pid="1", name="login", component="ratelimit"}'
        values: '1x20'
      - series: 'bulwark_shadow_enabled{${host('a')}, pid="2", name="login", component="ratelimit"}'
        values: '1x20'
      - series: 'bulwark_shadow_would_refuse_total{${host('a')}, pid="1", name="login", component="ratelimit", reason="rate"}'
        values: '0+60x20'
      - series: 'bulwark_shadow_would_refuse_total{${host('a')}, pid="2", name="login", component="ratelimit", reason="rate"}'
        values: '0+60x20'
      - series: 'bulwark_shadow_enabled{${host('a')}, pid="1", name="api", component="limiter"}'
        values: '0x20'
      - series: 'bulwark_shadow_would_refuse_total{${host('a')}, pid="1", name="api", component="limiter", reason="in-flight", priority="low"}'
        values: '0+60x20'
      - series: 'bulwark_ratelimit_redis_state{${host('b')}, name="signup", state="insurance"}'
        values: '0x4 1x16'
    alert_rule_test:
      - eval_time: 3m
        alertname: BulwarkShadowWouldShed
        exp_alerts: []
      - eval_time: 8m
        alertname: BulwarkShadowWouldShed
        exp_alerts:
          - exp_labels: { severity: info, job: gw, name: login, component: ratelimit, reason: rate }
            exp_annotations:
              summary: "gw: ratelimit login in shadow mode would refuse (rate)"
              description: "2 requests/s admitted that the component would refuse (docs/rules/shadow.md). Enforcing it now would refuse them: check its rule before turning shadow mode off."
      - eval_time: 5m
        alertname: BulwarkRedisLimiterOnInsurance
        exp_alerts:
          - exp_labels: { severity: warning, job: gw, instance: b, name: signup }
            exp_annotations:
              summary: "b: RedisRateLimiter signup decides locally"
              description: "Redis errs or does not answer in time, so the local insurance limiter decides: the fleet-wide limit holds only approximately until Redis answers again (bulwark_ratelimit_redis_failures_total says why)."
`
}
