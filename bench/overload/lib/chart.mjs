// A small SVG line chart: goodput and admitted p99 against offered load, one line per contender.
const COLORS = ['#888888', '#d08c1f', '#3b7dd8', '#1a9850', '#a02c9a', '#d73027', '#4d4d4d']

function panel({ x0, y0, w, h, title, yLabel, xs, series, yMax, log }) {
  const px = (i) => x0 + (i / (xs.length - 1)) * w
  const lo = log ? Math.log10(Math.max(1, Math.min(...series.flatMap((s) => s.values)))) : 0
  const hi = log ? Math.log10(yMax) : yMax
  const py = (v) => y0 + h - ((log ? Math.log10(Math.max(v, 1)) - lo : v) / (hi - lo)) * h
  const out = [`<text x="${x0 + w / 2}" y="${y0 - 12}" text-anchor="middle" font-weight="bold">${title}</text>`]
  out.push(`<line x1="${x0}" y1="${y0 + h}" x2="${x0 + w}" y2="${y0 + h}" stroke="#000"/>`)
  out.push(`<line x1="${x0}" y1="${y0}" x2="${x0}" y2="${y0 + h}" stroke="#000"/>`)
  xs.forEach((x, i) => out.push(`<text x="${px(i)}" y="${y0 + h + 16}" text-anchor="middle">${x}x</text>`))
  for (let k = 0; k <= 4; k++) {
    const v = log ? 10 ** (lo + ((hi - lo) * k) / 4) : (yMax * k) / 4
    const y = py(v)
    out.push(`<line x1="${x0 - 4}" y1="${y}" x2="${x0 + w}" y2="${y}" stroke="#eee"/>`)
    out.push(`<text x="${x0 - 6}" y="${y + 4}" text-anchor="end">${Math.round(v)}</text>`)
  }
  out.push(
    `<text x="${x0 - 44}" y="${y0 + h / 2}" transform="rotate(-90 ${x0 - 44} ${y0 + h / 2})" text-anchor="middle">${yLabel}</text>`,
  )
  series.forEach((s, j) => {
    const pts = s.values.map((v, i) => `${px(i)},${py(v)}`).join(' ')
    out.push(`<polyline fill="none" stroke="${COLORS[j % COLORS.length]}" stroke-width="2.5" points="${pts}"/>`)
    s.values.forEach((v, i) =>
      out.push(`<circle cx="${px(i)}" cy="${py(v)}" r="3.5" fill="${COLORS[j % COLORS.length]}"/>`),
    )
  })
  return out.join('\n')
}

/** rows: [{ contender, load (x), goodput (req/s), p99 (ms), criticalSuccess (0..1) }] */
export function overloadChart(rows, { capacity, machine, capacityKind = 'measured' }) {
  const contenders = [...new Set(rows.map((r) => r.contender))]
  const loads = [...new Set(rows.map((r) => r.load))].sort((a, b) => a - b)
  const pick = (c, key) => loads.map((l) => rows.find((r) => r.contender === c && r.load === l)?.[key] ?? 0)
  const goodput = contenders.map((c) => ({ name: c, values: pick(c, 'goodput') }))
  // A timeout (Infinity) is drawn at the top of the scale: 10 s.
  const p99 = contenders.map((c) => ({ name: c, values: pick(c, 'p99').map((v) => (Number.isFinite(v) ? v : 10_000)) }))
  const critical = contenders.map((c) => ({ name: c, values: pick(c, 'criticalSuccess').map((v) => 100 * v) }))
  const W = 1260
  const H = 420
  const goodputMax = Math.max(capacity * 1.1, ...goodput.flatMap((s) => s.values))
  const capacityY = 40 + 280 - (capacity / goodputMax) * 280
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    panel({
      x0: 70,
      y0: 40,
      w: 330,
      h: 280,
      title: 'Goodput (2xx within 500 ms SLO)',
      yLabel: 'requests / s',
      xs: loads,
      series: goodput,
      yMax: goodputMax,
    }),
    panel({
      x0: 490,
      y0: 40,
      w: 330,
      h: 280,
      title: 'Admitted p99 latency (log scale)',
      yLabel: 'ms',
      xs: loads,
      series: p99,
      yMax: Math.max(1000, ...p99.flatMap((s) => s.values)),
      log: true,
    }),
    panel({
      x0: 910,
      y0: 40,
      w: 330,
      h: 280,
      title: 'Critical requests within the SLO',
      yLabel: '%',
      xs: loads,
      series: critical,
      yMax: 100,
    }),
    `<line x1="70" x2="400" y1="${capacityY}" y2="${capacityY}" stroke="#000" stroke-dasharray="4 4"/>`,
    `<text x="402" y="${capacityY + 4}">capacity</text>`,
  ]
  let x = 70 // each legend entry as wide as its label (about 7 px a character)
  contenders.forEach((c, j) => {
    parts.push(`<rect x="${x}" y="360" width="14" height="4" fill="${COLORS[j % COLORS.length]}"/>`)
    parts.push(`<text x="${x + 20}" y="366">${c}</text>`)
    x += 50 + 7 * c.length
  })
  parts.push(
    `<text x="70" y="400" fill="#555">offered load as a multiple of the ${capacityKind} capacity (${Math.round(capacity)} req/s); ${machine}</text>`,
  )
  parts.push('</svg>')
  return parts.join('\n')
}
