import { type NestGuard, nestGuard, type NestGuardOptions } from './nest-guard'

/** The token of the application's NestGuard (`@Inject(BULWARK_GUARD)`: its stats, or to add it to the exporters). */
export const BULWARK_GUARD = 'bulwark.guard'

/** What BulwarkModule.forRoot returns: a NestJS DynamicModule. */
export interface BulwarkDynamicModule {
  module: typeof BulwarkModule
  global: true
  providers: Array<{ provide: string; useValue: NestGuard }>
  exports: string[]
}

/**
 * The guard for every HTTP route of a NestJS application, as a global module (the way `ThrottlerModule` is
 * imported): one NestGuard, registered as the application's guard (APP_GUARD) and interceptor (APP_INTERCEPTOR).
 *
 *   @Module({ imports: [BulwarkModule.forRoot({ limiter: { shared: 'api' } })], controllers: [...] })
 */
export class BulwarkModule {
  static forRoot(options?: NestGuardOptions): BulwarkDynamicModule {
    const guard = nestGuard(options)
    return {
      module: BulwarkModule,
      global: true,
      providers: [
        { provide: BULWARK_GUARD, useValue: guard },
        // @nestjs/core's APP_GUARD and APP_INTERCEPTOR tokens (their values): no import of @nestjs/core needed.
        { provide: 'APP_GUARD', useValue: guard },
        { provide: 'APP_INTERCEPTOR', useValue: guard },
      ],
      exports: [BULWARK_GUARD],
    }
  }
}
