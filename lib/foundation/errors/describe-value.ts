/** A short, safe rendering of a bad value for an error message (never huge, never throws). */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') {
    const shown = value.length > 60 ? `${value.slice(0, 60)}...` : value
    return `${JSON.stringify(shown)} (string)`
  }
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
    return `${String(value)} (${typeof value})`
  }
  if (value === null) return 'null'
  if (value === undefined) return 'undefined'
  if (typeof value === 'function') return 'a function'
  if (Array.isArray(value)) return `an array of length ${value.length}`
  if (ArrayBuffer.isView(value)) return `a ${value.constructor.name} of ${value.byteLength} bytes`
  return `an object`
}
