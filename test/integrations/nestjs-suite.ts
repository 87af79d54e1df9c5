// The NestJS guard through the adapter conformance suite, against one NestJS major (nestjs.test.ts: 12 at the root;
// nestjs-v11.test.ts: 11 from test/peers/nestjs-v11), on Express and on Fastify, with Nest's own request pipeline.
// Decorators are applied as calls: the tests are compiled without TypeScript's decorator support.
import type * as http from 'http'
import { describe, expect, it } from 'vitest'

import {
  BULWARK_GUARD,
  BulwarkModule,
  GuardPolicy,
  type NestGuard,
  nestGuard,
  type NestGuardOptions,
  SkipGuard,
} from '../../lib/entries/nestjs'
import {
  type AppHandler,
  controlledLimiter,
  get,
  inboundScenarios,
  serving,
  type StartServer,
} from './inbound-scenarios'

type Decorator = (target: object, key?: string | symbol, descriptor?: PropertyDescriptor) => void
type ParamDecorator = (target: object, key: string | symbol, index: number) => void

/** One NestJS major's modules, as an application of that major loads them. */
export interface NestKit {
  label: string
  common: {
    Controller(prefix?: string): Decorator
    Module(metadata: object): Decorator
    All(path?: string): Decorator
    Get(path?: string): Decorator
    Req(): ParamDecorator
    Res(options?: { passthrough: boolean }): ParamDecorator
  }
  core: { NestFactory: { create(module: object, adapter: object, options?: object): Promise<NestApp> } }
  /** Each platform: its name, a new adapter, and its route path for every path. */
  adapters: Array<[name: string, make: () => object, everyPath: string]>
}

interface NestApp {
  listen(port: number, host: string): Promise<unknown>
  getHttpServer(): http.Server
  useGlobalGuards(...guards: object[]): void
  useGlobalInterceptors(...interceptors: object[]): void
  get(token: string): unknown
  close(): Promise<void>
}

/** Express's response (setHeader) or Fastify's reply (header). */
type HeaderSetter = { setHeader?(name: string, value: string): void; header?(name: string, value: string): void }

function setResponseHeader(response: HeaderSetter, name: string, value: string): void {
  if (typeof response.header === 'function' && typeof response.setHeader !== 'function') response.header(name, value)
  else response.setHeader?.(name, value)
}

function decorateMethod(decorator: Decorator, type: { prototype: object }, name: string): void {
  decorator(type.prototype, name, Object.getOwnPropertyDescriptor(type.prototype, name))
}

export function nestSuite(kit: NestKit): void {
  const { common, core } = kit

  /** A controller whose one route answers every path with `handler`, its request's signal handed to it. */
  function controllerFor(handler: AppHandler, everyPath: string) {
    class WorkController {
      any(request: { signal?: AbortSignal }, response: HeaderSetter) {
        return handler(request.signal, (name, value) => setResponseHeader(response, name, value))
      }
    }
    common.Req()(WorkController.prototype, 'any', 0)
    common.Res({ passthrough: true })(WorkController.prototype, 'any', 1)
    decorateMethod(common.All(everyPath), WorkController, 'any')
    common.Controller()(WorkController)
    return WorkController
  }

  async function listen(module: object, adapter: object, setup?: (app: NestApp) => void) {
    const app = await core.NestFactory.create(module, adapter, { logger: false })
    setup?.(app)
    await app.listen(0, '127.0.0.1')
    const server = await serving(app.getHttpServer())
    const stats = () => (app.get(BULWARK_GUARD) as NestGuard).guard.stats()
    return { port: server.port, close: () => app.close(), stats }
  }

  for (const [platform, adapter, everyPath] of kit.adapters) {
    const start: StartServer = async (guard, handler) => {
      class AppModule {}
      const options: NestGuardOptions = { ...guard, nest: common }
      common.Module({ imports: [BulwarkModule.forRoot(options)], controllers: [controllerFor(handler, everyPath)] })(
        AppModule,
      )
      return listen(AppModule, adapter())
    }

    describe(`nestGuard (NestJS ${kit.label}, ${platform}, BulwarkModule)`, () => {
      inboundScenarios(start)

      it('takes a route’s priority from @GuardPolicy, and lets @SkipGuard routes through untouched', async () => {
        const c = controlledLimiter(10)
        class RoutesController {
          health() {
            return 'healthy'
          }
          browse() {
            return 'page'
          }
        }
        decorateMethod(GuardPolicy({ priority: 'critical' }), RoutesController, 'health')
        decorateMethod(common.Get('health'), RoutesController, 'health')
        decorateMethod(common.Get('browse'), RoutesController, 'browse')
        common.Controller()(RoutesController)
        class OpenController {
          metrics() {
            return 'metrics'
          }
        }
        decorateMethod(common.Get('metrics'), OpenController, 'metrics')
        common.Controller()(OpenController)
        SkipGuard()(OpenController)
        class AppModule {}
        const guard = nestGuard({ limiter: c.limiter, nest: common })
        common.Module({ controllers: [RoutesController, OpenController] })(AppModule)
        const { port, close } = await listen(AppModule, adapter(), (app) => {
          app.useGlobalGuards(guard)
          app.useGlobalInterceptors(guard)
        })
        c.hold(11) // shares of 10: normal 10, critical 12
        c.signal.load = 900
        expect(await get(port, {}, '/browse')).toMatchObject({ status: 503 })
        expect(await get(port, {}, '/health')).toMatchObject({ status: 200, body: 'healthy' })
        expect(await get(port, {}, '/metrics')).toMatchObject({ status: 200, body: 'metrics' })
        const s = c.limiter.stats()
        expect(s.byPriority.critical.admitted).toBe(12) // the 11 held, and /health
        expect(s.byPriority.normal.shedInFlight).toBe(1)
        expect(s.admitted).toBe(12) // /metrics never asked the limiter
        await close()
        c.releaseHeld()
        c.limiter.close()
      })

      it('throws an HttpException that exception filters see: status, reason and retryAfter', async () => {
        const c = controlledLimiter(2)
        const guard = nestGuard({ limiter: c.limiter, nest: common, retryAfter: 5 })
        const response = { setHeader: () => undefined, statusCode: 200 } as unknown as http.ServerResponse
        const context = {
          getType: () => 'http',
          getHandler: () => function handler() {},
          getClass: () => class Controller {},
          switchToHttp: () => ({ getRequest: () => ({ headers: {}, socket: {} }), getResponse: () => response }),
        }
        c.hold(3)
        c.signal.load = 900
        let thrown: unknown
        try {
          guard.canActivate(context)
        } catch (error) {
          thrown = error
        }
        expect(thrown).toMatchObject({ reason: 'in-flight', retryAfter: 5, answered: false })
        expect((thrown as { getStatus(): number }).getStatus()).toBe(503)
        expect((thrown as { getResponse(): unknown }).getResponse()).toEqual({
          error: 'overloaded',
          reason: 'in-flight',
        })
        expect(thrown).toBeInstanceOf((kit.common as unknown as { HttpException: new () => Error }).HttpException)
        c.releaseHeld()
        c.limiter.close()
      })
    })
  }
}
