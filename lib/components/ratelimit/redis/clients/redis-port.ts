/**
 * What the Redis rate limiter needs from a Redis client, whichever client it is (docs/readme/ratelimit.md, "Redis
 * and Valkey clients"): run a script on the server that holds its keys, say whether commands sent now reach a
 * server, and load scripts on every primary ahead of traffic. One adapter per client family implements it.
 */
export interface RedisPort {
  /** The client family, for messages: 'ioredis', 'node-redis', 'valkey-glide'. */
  readonly family: string
  /** Keys live on several shards (Redis Cluster): the keys of one call must share a hash slot. */
  readonly cluster: boolean
  /**
   * 'ready': commands sent now go to a server. 'starting': never connected yet, or connecting (commands would wait
   * in the client). 'down': disconnected, reconnecting after a failure, or closed.
   */
  status(): PortStatus
  /** EVALSHA on the shard of `keys`; a server without the script rejects with an error that isNoScript() knows. */
  evalSha(sha: string, keys: string[], args: string[]): Promise<unknown>
  /** EVAL: sends the script's source (the server caches it for the next EVALSHA). */
  eval(script: string, keys: string[], args: string[]): Promise<unknown>
  /** SCRIPT LOAD on every primary (waiting for the client to connect first); resolves when all have it. */
  load(scripts: readonly string[]): Promise<void>
}

export type PortStatus = 'ready' | 'starting' | 'down'

/** NOSCRIPT, as each client words it (Valkey GLIDE wraps the server's error as `NoScriptError`). */
export function isNoScript(error: unknown): boolean {
  if (!(error instanceof Error)) return false
  const message = error.message
  return message.startsWith('NOSCRIPT') || message.includes('NoScriptError')
}

/** Resolves when `emitter` emits `event` (once); for clients whose readiness is an event. */
export function once(emitter: unknown, event: string): Promise<void> {
  return new Promise((resolve) => {
    ;(emitter as { once(event: string, listener: () => void): void }).once(event, () => resolve())
  })
}
