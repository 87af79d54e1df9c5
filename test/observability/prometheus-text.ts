/** One sample of the Prometheus text exposition format. */
export interface PromSample {
  name: string
  labels: Record<string, string>
  value: number
}

/** Parses `registry.metrics()`: the samples, and each metric family's TYPE and HELP. */
export function parsePrometheusText(text: string): {
  samples: PromSample[]
  types: Map<string, string>
  help: Map<string, string>
} {
  const samples: PromSample[] = []
  const types = new Map<string, string>()
  const help = new Map<string, string>()
  for (const line of text.split('\n')) {
    if (line === '') continue
    const meta = /^# (TYPE|HELP) (\S+) (.*)$/.exec(line)
    if (meta) {
      ;(meta[1] === 'TYPE' ? types : help).set(meta[2], meta[3])
      continue
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!m) throw new Error(`not a sample line: ${line}`)
    const labels: Record<string, string> = {}
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1]] = l[2].replace(/\\(.)/g, '$1')
    samples.push({ name: m[1], labels, value: Number(m[3]) })
  }
  return { samples, types, help }
}

/** The value of the one sample of `name` whose labels include `labels`. */
export function valueOf(samples: PromSample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`)
  return found[0]?.value
}
