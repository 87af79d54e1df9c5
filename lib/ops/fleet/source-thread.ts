// The worker thread a host's watcher keeps its source's connections in (thread-rule-source.ts): the source a URL
// names, opened here, answering the watcher's requests and passing on what it watches.
import { parentPort, workerData } from 'worker_threads'

import { openRuleSource } from './open-source'

/** What the watcher asks. */
export type SourceRequest =
  | { id: number; op: 'read' }
  | { id: number; op: 'report'; host: string; text: string; ttl: number }
  | { id: number; op: 'reports' }
  | { id: number; op: 'watch' }
  | { id: number; op: 'close' }

/** What the thread answers (to a request, by its id) or tells (an event of the watch). */
export type SourceMessage =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; message: string }
  | { event: 'document'; text: string; revision: number }
  | { event: 'error'; message: string }

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** Serves requests on `port` for the source of `url` (run in the thread; exported for the tests). */
export function serveSource(port: NonNullable<typeof parentPort>, url: string, namespace: string): void {
  const post = (m: SourceMessage) => port.postMessage(m)
  let opened: ReturnType<typeof openRuleSource> | undefined
  try {
    opened = openRuleSource(url, namespace)
  } catch (error) {
    post({ event: 'error', message: message(error) })
  }
  const source = opened?.source
  port.on('message', (request: SourceRequest) => {
    const answer = (work: () => Promise<unknown> | undefined) => {
      if (source === undefined) return post({ id: request.id, ok: false, message: 'the source could not be opened' })
      Promise.resolve()
        .then(work)
        .then(
          (value) => post({ id: request.id, ok: true, value }),
          (error: unknown) => post({ id: request.id, ok: false, message: message(error) }),
        )
    }
    switch (request.op) {
      case 'read':
        return answer(() => source?.read())
      case 'report':
        return answer(() => source?.report?.(request.host, request.text, request.ttl))
      case 'reports':
        return answer(() => source?.reports?.())
      case 'watch':
        source?.watch(
          (doc) => post({ event: 'document', text: doc.text, revision: doc.revision }),
          (error) => post({ event: 'error', message: message(error) }),
        )
        return answer(() => undefined)
      case 'close':
        return answer(() => source?.close())
    }
  })
}

if (parentPort !== null && workerData?.bulwarkRuleSource === true) {
  serveSource(parentPort, workerData.url as string, workerData.namespace as string)
}
