// Every rule source against its real server (docs/readme/fleet.md): read, compare-and-set, watch, reports, and a
// watcher that misses a change catching up.
import * as fs from 'fs'
import * as os from 'os'
import * as path from 'path'

import Redis from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { EtcdRuleSource } from '../../lib/ops/fleet/etcd-rule-source'
import { FileRuleSource } from '../../lib/ops/fleet/file-rule-source'
import { openRuleSource } from '../../lib/ops/fleet/open-source'
import { RedisRuleSource } from '../../lib/ops/fleet/redis-rule-source'
import type { RuleSource, SourceDocument } from '../../lib/ops/fleet/rule-source'
import { EtcdServer, etcdTarget } from '../helpers/etcd-server'
import { RedisCluster, clusterTarget } from '../helpers/redis-cluster'
import { RedisServer, redisTarget } from '../helpers/redis-server'
import { uniqueName } from '../helpers/unique-name'
import { waitFor } from '../helpers/wait-for'

const doc = (version: number, extra = '') => JSON.stringify({ format: 1, version, components: {}, extra })

/** What every source must do, given two of them on one store (a writer's and a host's). */
function contract(make: () => { writer: RuleSource; host: RuleSource }): void {
  it('reads nothing before the first write, then what was written, with a revision', async () => {
    const { writer, host } = make()
    try {
      expect(await host.read()).toBeUndefined()
      const revision = await writer.write!(doc(1), undefined)
      expect(revision).toBeGreaterThan(0)
      expect(await host.read()).toEqual({ text: doc(1), revision })
    } finally {
      await Promise.all([writer.close(), host.close()])
    }
  })

  it('writes only over the revision it read (compare and set)', async () => {
    const { writer, host } = make()
    try {
      const first = await writer.write!(doc(1), undefined)
      expect(await writer.write!(doc(1, 'again'), undefined)).toBeUndefined() // someone wrote first
      const second = await host.write!(doc(2), first)
      expect(second).toBeGreaterThan(first as number)
      expect(await writer.write!(doc(3), first)).toBeUndefined() // stale
      expect((await writer.read())?.text).toBe(doc(2))
    } finally {
      await Promise.all([writer.close(), host.close()])
    }
  })

  it('tells a watching host of every change', async () => {
    const { writer, host } = make()
    const seen: SourceDocument[] = []
    const watch = host.watch(
      (d) => seen.push(d),
      () => undefined,
    )
    try {
      let revision = await writer.write!(doc(1), undefined)
      await waitFor(() => seen.some((d) => d.text === doc(1)), { what: 'the first document' })
      for (let v = 2; v <= 4; v++) revision = await writer.write!(doc(v), revision)
      await waitFor(() => seen.some((d) => d.text === doc(4)), { what: 'the last document' })
      expect(seen[seen.length - 1]).toEqual({ text: doc(4), revision })
    } finally {
      watch.dispose()
      await Promise.all([writer.close(), host.close()])
    }
  })
}

function hostReports(make: () => RuleSource): void {
  it("keeps hosts' reports until they expire", async () => {
    const source = make()
    try {
      await source.report!('pod-a', '{"host":"pod-a"}', 60_000)
      await source.report!('pod-b', '{"host":"pod-b"}', 0) // expired at once
      expect(await source.reports!()).toEqual(['{"host":"pod-a"}'])
    } finally {
      await source.close()
    }
  })
}

const redis = redisTarget(true)

describe.skipIf(!redis)('RedisRuleSource on a real Redis', () => {
  let server: RedisServer
  beforeAll(async () => {
    server = await RedisServer.start(redis!.binary!)
  })
  afterAll(() => server?.stop())

  const make = () => {
    const namespace = uniqueName('ns')
      .replace(/[^A-Za-z0-9_-]/g, '_')
      .slice(-40)
    return {
      writer: openRuleSource(`${server.url}/0?namespace=${namespace}`, undefined).source,
      host: new RedisRuleSource({ url: server.url, namespace }),
    }
  }
  contract(make)
  hostReports(() => make().host)

  it('a host whose subscription was cut while a change was published catches up from the version', async () => {
    const { writer, host } = make()
    const seen: SourceDocument[] = []
    const watch = host.watch(
      (d) => seen.push(d),
      () => undefined,
    )
    const admin = new Redis(server.url)
    try {
      const first = await writer.write!(doc(1), undefined)
      await waitFor(() => seen.length > 0, { what: 'the first document' })
      // Cut every subscriber, then publish at once: the message reaches nobody.
      await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub')
      await writer.write!(doc(2), first)
      await waitFor(() => seen.some((d) => d.text === doc(2)), { what: 'the missed change' })
      expect(seen.map((d) => d.text)).toContain(doc(2))
    } finally {
      watch.dispose()
      admin.disconnect()
      await Promise.all([writer.close(), host.close()])
    }
  })
})

const cluster = clusterTarget()

describe.skipIf(!cluster)('RedisRuleSource on a real Redis Cluster', () => {
  let nodes: RedisCluster
  beforeAll(async () => {
    nodes = await RedisCluster.start(cluster!, { masters: 3, replicas: 0 })
  }, 60_000)
  afterAll(() => nodes?.stop())

  const make = () => {
    const namespace = uniqueName('cl').slice(-40)
    const url = `redis+cluster://${nodes.startupNodes.map((n) => `${n.host}:${n.port}`).join(',')}?namespace=${namespace}`
    return {
      writer: openRuleSource(url, undefined).source,
      host: new RedisRuleSource({ cluster: nodes.startupNodes, namespace }),
    }
  }
  contract(make)
  hostReports(() => make().host)
})

const etcd = etcdTarget()

describe.skipIf(!etcd)('EtcdRuleSource on a real etcd', () => {
  let server: EtcdServer
  beforeAll(async () => {
    server = await EtcdServer.start(etcd!)
  }, 30_000)
  afterAll(() => server?.stop())

  const make = () => {
    const namespace = uniqueName('et').slice(-40)
    return {
      writer: openRuleSource(`${server.url}?namespace=${namespace}`, undefined).source,
      host: new EtcdRuleSource({ hosts: [server.endpoint], namespace }),
    }
  }
  contract(make)
  hostReports(() => make().host)

  it('a watch survives a restart of etcd and sees what was written after it', async () => {
    const { writer, host } = make()
    const seen: SourceDocument[] = []
    const errors: Error[] = []
    const watch = host.watch(
      (d) => seen.push(d),
      (e) => errors.push(e),
    )
    try {
      const first = await writer.write!(doc(1), undefined)
      await waitFor(() => seen.length > 0, { what: 'the first document' })
      await server.restart()
      const second = await waitFor(() => writer.write!(doc(2), first).catch(() => undefined), {
        what: 'a write after the restart',
        interval: 100,
      })
      await waitFor(() => seen.some((d) => d.text === doc(2)), { what: 'the change after the restart' })
      expect(seen[seen.length - 1].revision).toBe(second)
    } finally {
      watch.dispose()
      await Promise.all([writer.close(), host.close()])
    }
  }, 30_000)
})

describe('FileRuleSource', () => {
  const dirs: string[] = []
  afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })))

  /** A ConfigMap volume as the kubelet lays it out: the key is a symlink into ..data, itself a symlink. */
  function configMap(): { file: string; swap: (text: string) => void } {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-configmap-'))
    dirs.push(dir)
    let n = 0
    const swap = (text: string) => {
      const version = `..v${++n}`
      fs.mkdirSync(path.join(dir, version))
      fs.writeFileSync(path.join(dir, version, 'rules.json'), text)
      fs.symlinkSync(version, path.join(dir, '..data_tmp'))
      fs.renameSync(path.join(dir, '..data_tmp'), path.join(dir, '..data')) // the atomic swap
    }
    fs.symlinkSync('..data/rules.json', path.join(dir, 'rules.json'))
    return { file: path.join(dir, 'rules.json'), swap }
  }

  contract(() => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bulwark-rules-file-'))
    dirs.push(dir)
    const file = path.join(dir, 'rules.json')
    return {
      writer: new FileRuleSource({ path: file }),
      host: openRuleSource(`file://${file}?namespace=x`, undefined).source,
    }
  })

  it('sees a ConfigMap volume updated by a symlink swap, read whole', async () => {
    const { file, swap } = configMap()
    swap(doc(1))
    const host = new FileRuleSource({ path: file })
    const seen: SourceDocument[] = []
    const watch = host.watch(
      (d) => seen.push(d),
      () => undefined,
    )
    try {
      await waitFor(() => seen.some((d) => d.text === doc(1)), { what: 'the first version' })
      swap(doc(2, 'x'.repeat(100_000)))
      await waitFor(() => seen.some((d) => d.revision === 2), { what: 'the swapped version' })
      expect(seen[seen.length - 1].text).toBe(doc(2, 'x'.repeat(100_000)))
    } finally {
      watch.dispose()
      await host.close()
    }
  })

  it('never reads more than a document may hold', async () => {
    const { file, swap } = configMap()
    swap('x'.repeat(3 << 20))
    const read = await new FileRuleSource({ path: file }).read()
    expect(read?.text.length).toBe((1 << 20) + 1) // one byte past the bound: refused as too large when checked
  })
})
