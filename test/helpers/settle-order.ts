/** Records the order in which promises settle, as 'label' or 'label!reason' (an error's reason, else its name). */
export function track(order: string[], label: string, promise: Promise<unknown>): void {
  promise.then(
    () => order.push(label),
    (error: { reason?: string; name: string }) => order.push(`${label}!${error.reason ?? error.name}`),
  )
}
