// The private redis-server the Redis tests start (test/helpers/redis-server.ts): a port picked free can be taken
// before redis-server binds it (one CI run failed so), and the server must then start on a new pick.
import * as net from 'net'
import { describe, expect, it } from 'vitest'

import { RedisServer, freePort, redisTarget } from '../helpers/redis-server'

const target = redisTarget(true)

describe.skipIf(target === undefined)('the private redis-server of the Redis tests', () => {
  it('starts on a new port when the one it picked is taken before it binds', async () => {
    const squatter = net.createServer()
    const taken = await new Promise<number>((resolve) =>
      squatter.listen(0, '127.0.0.1', () => resolve((squatter.address() as net.AddressInfo).port)),
    )
    const picks: number[] = []
    const server = await RedisServer.start(target!.binary!, {
      choosePort: async () => {
        const port = picks.length === 0 ? taken : await freePort()
        picks.push(port)
        return port
      },
    })
    try {
      expect(picks).toHaveLength(2)
      expect(server.port).toBe(picks[1])
      expect(server.port).not.toBe(taken)
    } finally {
      await server.kill()
      squatter.close()
    }
  })

  it('reports what redis-server printed when it cannot start on a port it was given', async () => {
    const squatter = net.createServer()
    const taken = await new Promise<number>((resolve) =>
      squatter.listen(0, '127.0.0.1', () => resolve((squatter.address() as net.AddressInfo).port)),
    )
    try {
      await expect(RedisServer.start(target!.binary!, { port: taken })).rejects.toThrow(/Address already in use/)
    } finally {
      squatter.close()
    }
  })
})
