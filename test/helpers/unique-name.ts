let counter = 0
/** A region name no other test run uses at the same time. */
export function uniqueName(prefix: string): string {
  counter++
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${counter}`
}
