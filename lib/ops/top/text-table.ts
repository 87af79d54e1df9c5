import { printable } from './printable'

/**
 * Plain-text columns: each as wide as its widest cell, two spaces apart, cut to the terminal's width. Every cell is
 * escaped for the terminal (printable): names, kinds, details, keys and targets come from elsewhere.
 */
export function textTable(head: readonly string[], cells: readonly (readonly string[])[], width = Infinity): string[] {
  const header = head.map(printable)
  const rows = cells.map((row) => row.map(printable))
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? '').length)))
  const line = (cells: readonly string[]) => {
    const text = cells
      .map((cell, c) => (c === cells.length - 1 ? cell : cell.padEnd(widths[c])))
      .join('  ')
      .trimEnd()
    return text.length > width ? `${text.slice(0, Math.max(0, width - 1))}…` : text
  }
  return [line(header), ...rows.map(line)]
}

export function count(n: number): string {
  return Math.round(n).toLocaleString('en-US')
}

export function rate(n: number | undefined): string {
  if (n === undefined) return '-'
  if (n >= 100) return count(n)
  return n >= 1 || n === 0 ? n.toFixed(n === 0 ? 0 : 1) : n.toPrecision(2)
}

export function percent(ratio: number): string {
  return `${(100 * ratio).toFixed(ratio < 0.1 && ratio > 0 ? 1 : 0)}%`
}

export function bytes(n: number): string {
  if (n >= 2 ** 20) return `${(n / 2 ** 20).toFixed(1)} MiB`
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KiB`
  return `${n} B`
}

export function seconds(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`
  if (ms < 120_000) return `${(ms / 1000).toFixed(1)} s`
  return `${Math.round(ms / 60_000)} min`
}
