/**
 * Runs `fn` and reports how it ended to `report(ok, start)`. A plain (non-thenable) result is reported at once and
 * costs no extra microtask; a thrown error or a rejected promise reports a failure and is passed on unchanged.
 */
export function runGuarded<T>(
  fn: () => T | PromiseLike<T>,
  report: (ok: boolean, start: number) => void,
  start: number,
): Promise<T> {
  let result: T | PromiseLike<T>
  try {
    result = fn()
  } catch (error) {
    report(false, start)
    return Promise.reject(error)
  }
  if (isThenable(result)) {
    return Promise.resolve(result).then(
      (value) => {
        report(true, start)
        return value
      },
      (error: unknown) => {
        report(false, start)
        throw error
      },
    )
  }
  report(true, start)
  return Promise.resolve(result)
}

function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as PromiseLike<T>).then === 'function'
  )
}
