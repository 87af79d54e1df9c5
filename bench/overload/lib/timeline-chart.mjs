// A small SVG chart of series over time, in side-by-side panels, with vertical markers (a change in the middle of
// a run, say).
const COLORS = ['#3b7dd8', '#d08c1f', '#1a9850', '#a02c9a', '#888888']

function panel({ x0, y0, w, h, title, yLabel, series, tMax, yMax, markers }) {
  const px = (t) => x0 + (t / tMax) * w
  const py = (v) => y0 + h - (Math.min(v, yMax) / yMax) * h
  const out = [`<text x="${x0 + w / 2}" y="${y0 - 12}" text-anchor="middle" font-weight="bold">${title}</text>`]
  out.push(`<line x1="${x0}" y1="${y0 + h}" x2="${x0 + w}" y2="${y0 + h}" stroke="#000"/>`)
  out.push(`<line x1="${x0}" y1="${y0}" x2="${x0}" y2="${y0 + h}" stroke="#000"/>`)
  const tStep = tMax > 20 ? 5 : 2
  for (let t = 0; t <= tMax; t += tStep) {
    out.push(`<text x="${px(t)}" y="${y0 + h + 16}" text-anchor="middle">${t}</text>`)
  }
  for (let k = 0; k <= 4; k++) {
    const v = (yMax * k) / 4
    out.push(`<line x1="${x0 - 4}" y1="${py(v)}" x2="${x0 + w}" y2="${py(v)}" stroke="#eee"/>`)
    out.push(`<text x="${x0 - 6}" y="${py(v) + 4}" text-anchor="end">${Math.round(v)}</text>`)
  }
  out.push(
    `<text x="${x0 - 44}" y="${y0 + h / 2}" transform="rotate(-90 ${x0 - 44} ${y0 + h / 2})" text-anchor="middle">${yLabel}</text>`,
  )
  for (const m of markers) {
    out.push(`<line x1="${px(m.t)}" x2="${px(m.t)}" y1="${y0}" y2="${y0 + h}" stroke="#000" stroke-dasharray="4 4"/>`)
  }
  series.forEach((s, j) => {
    const color = s.color ?? COLORS[j % COLORS.length]
    const pts = s.points.map(([t, v]) => `${px(t).toFixed(1)},${py(v).toFixed(1)}`).join(' ')
    const dash = s.dashed ? ' stroke-dasharray="6 3"' : ''
    out.push(`<polyline fill="none" stroke="${color}" stroke-width="2"${dash} points="${pts}"/>`)
  })
  return out.join('\n')
}

/**
 * panels: [{ title, yLabel, yMax, series: [{ name, points: [[seconds, value]], color?, dashed? }] }];
 * markers: [{ t (seconds), label }]; legend: [{ name, color, dashed? }].
 */
export function timelineChart({ panels, markers = [], legend, note, tMax }) {
  const W = 420 * panels.length + 40
  const H = 440
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
  ]
  panels.forEach((p, i) => parts.push(panel({ x0: 70 + 420 * i, y0: 40, w: 330, h: 280, tMax, markers, ...p })))
  legend.forEach((l, j) => {
    const x = 70 + j * 230
    const dash = l.dashed ? ' stroke-dasharray="6 3"' : ''
    parts.push(`<line x1="${x}" x2="${x + 18}" y1="364" y2="364" stroke="${l.color}" stroke-width="3"${dash}/>`)
    parts.push(`<text x="${x + 24}" y="368">${l.name}</text>`)
  })
  const markerText = markers.map((m) => `dashed line at ${m.t} s: ${m.label}`).join('; ')
  parts.push(`<text x="70" y="396" fill="#555">seconds; ${markerText}</text>`)
  if (note) parts.push(`<text x="70" y="420" fill="#555">${note}</text>`)
  parts.push('</svg>')
  return parts.join('\n')
}
