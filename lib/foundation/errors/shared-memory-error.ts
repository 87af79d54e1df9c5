import { BulwarkError } from './bulwark-error'

/**
 * Shared memory could not be attached: a system call failed (permissions, /dev/shm full), the region's lock was
 * held too long, or every member slot is taken. `code` tells which.
 */
export class SharedMemoryError extends BulwarkError {
  readonly region: string

  constructor(code: string, region: string, message: string) {
    super(code, message)
    this.region = region
  }
}
