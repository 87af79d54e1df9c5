// Hono on Node behind bulwark: node examples/hono/server.mjs (PORT, default 3000).
// The guard sheds what the host cannot serve (503), answers a handler that takes longer than 2 s in its place, and
// gives each token back when @hono/node-server has sent the response.
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { honoGuard } from 'bulwark/hono'

const app = new Hono()
app.use(
  honoGuard({
    limiter: { shared: process.env.BULWARK_SHARED ?? 'hono-example' }, // one limiter for every worker of the host
    priority: (c) => (c.req.path === '/health' ? 'critical' : 'normal'),
    timeout: 2000,
  }),
)
app.get('/health', (c) => c.text('ok'))
app.get('/hello/:name', async (c) => {
  // c.req.signal aborts when the guard answers in this handler's place, or when the client goes away
  const signal = c.req.signal
  await new Promise((resolve) => setTimeout(resolve, 5))
  return c.json({ hello: c.req.param('name'), aborted: signal.aborted })
})

serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000), hostname: '127.0.0.1' }, (info) =>
  console.log(`listening on ${info.port}`),
)
