import { type RedisPort, isNoScript } from './clients/redis-port'

/** EVALSHA, and once more as EVAL when the server lost the script (a restart, SCRIPT FLUSH, a promoted replica). */
export function runScript(
  port: RedisPort,
  script: string,
  sha: string,
  keys: string[],
  args: string[],
): Promise<unknown> {
  const attempt = (): Promise<unknown> => {
    try {
      return port.evalSha(sha, keys, args)
    } catch (error) {
      return Promise.reject(error) // a client that throws instead of rejecting
    }
  }
  return attempt().catch((error: unknown) => {
    if (!isNoScript(error)) throw error
    return port.eval(script, keys, args)
  })
}
