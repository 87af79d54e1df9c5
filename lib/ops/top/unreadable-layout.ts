/** A region laid out by a version or a configuration that this watcher cannot read (it is listed, not inspected). */
export class UnreadableLayout extends Error {
  override readonly name = 'UnreadableLayout'
}
