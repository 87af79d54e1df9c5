/** Base class of every error bulwark throws; `code` is stable and safe to branch on. */
export class BulwarkError extends Error {
  readonly code: string

  constructor(code: string, message: string) {
    super(message)
    this.name = new.target.name
    this.code = code
  }
}
