// npm run bench:overload [-- <scenario> ...]: protection under overload, each scenario measured against the
// alternatives in one run. Scenarios are files in scenarios/ exporting run(); they share the generators
// (bench/lib/), the server harness (lib/processes.mjs, servers/) and the report writer (lib/report.mjs). With no
// name, every scenario runs, in the order below.
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

const wanted = process.argv.slice(2)
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
