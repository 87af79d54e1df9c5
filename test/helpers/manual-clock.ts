/** A clock tests move by hand. */
export class ManualClock {
  constructor(public time = 0) {}
  readonly now = (): number => this.time
  advance(ms: number): void {
    this.time += ms
  }
}
