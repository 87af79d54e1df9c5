import type { PortStatus, RedisPort } from './redis-port'

/** The parts of Valkey GLIDE (`GlideClient`, `GlideClusterClient` from @valkey/valkey-glide 2) used here. */
export interface GlideClient {
  /** options: `{ route: 'allPrimaries' }` on a cluster. */
  customCommand(args: string[], options?: unknown): Promise<unknown>
  invokeScript(...args: never[]): Promise<unknown>
  /** Only on GlideClusterClient. */
  invokeScriptWithRoute?(...args: never[]): Promise<unknown>
}

export function isGlide(client: object): client is GlideClient {
  const c = client as Partial<GlideClient>
  return typeof c.customCommand === 'function' && typeof c.invokeScript === 'function'
}

/**
 * GLIDE's own script objects live in its native core and need releasing; plain EVALSHA and EVAL through
 * customCommand run the same scripts, and GLIDE routes them by their first key on a cluster.
 */
export class GlidePort implements RedisPort {
  readonly family = 'valkey-glide'
  readonly cluster: boolean

  constructor(private readonly client: GlideClient) {
    this.cluster = typeof client.invokeScriptWithRoute === 'function'
  }

  /** A GLIDE client exists only once connected, and reconnects inside its core; failures show as errors. */
  status(): PortStatus {
    return 'ready'
  }

  evalSha(sha: string, keys: string[], args: string[]): Promise<unknown> {
    return this.client.customCommand(['EVALSHA', sha, String(keys.length), ...keys, ...args])
  }

  eval(script: string, keys: string[], args: string[]): Promise<unknown> {
    return this.client.customCommand(['EVAL', script, String(keys.length), ...keys, ...args])
  }

  async load(scripts: readonly string[]): Promise<void> {
    const options = this.cluster ? { route: 'allPrimaries' as const } : undefined
    await Promise.all(scripts.map((script) => this.client.customCommand(['SCRIPT', 'LOAD', script], options)))
  }
}
