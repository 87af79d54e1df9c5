// npm run bench:overload [-- [--proxies] <scenario> ...]: protection under overload, each scenario measured against
// the alternatives in one run. Scenarios are files in scenarios/ exporting run(); they share the generators
// (bench/lib/), the server harness (lib/processes.mjs, servers/) and the report writer (lib/report.mjs). With no
// name, every scenario runs, in the order below. --proxies (or PROXIES=1) adds HAProxy and nginx in front of the
// gateway to the scenarios that run them (upstream, cpu-bound, capacity-change; lib/proxy-contenders.mjs): those
// three then take about 40 minutes instead of 20.
import * as os from 'os'

const SCENARIOS = [
  'cpu-bound',
  'upstream',
  'two-upstreams',
  'capacity-change',
  'deadlines',
  'fairness',
  'burst',
  'ten-x',
  'slow-readers',
]

const args = process.argv.slice(2)
if (args.includes('--proxies')) process.env.PROXIES = '1'
const wanted = args.filter((arg) => arg !== '--proxies')
const unknown = wanted.filter((name) => !SCENARIOS.includes(name))
if (unknown.length > 0) {
  console.error(`unknown scenario ${unknown.join(', ')}; the scenarios are: ${SCENARIOS.join(', ')}`)
  process.exit(2)
}
for (const name of wanted.length > 0 ? wanted : SCENARIOS) {
  console.log(`\n== ${name} (load average ${os.loadavg()[0].toFixed(1)})`)
  const scenario = await import(`./scenarios/${name}.mjs`)
  await scenario.run()
}
