// NestJS behind bulwark, in plain JavaScript: node examples/nestjs/main.cjs (PORT, default 3000).
// In TypeScript these calls are the decorators written above each class and method (docs/guide/integrations.md):
//   @Controller() class HelloController { @GuardPolicy({ priority: 'critical' }) @Get('health') health() ... }
//   @Module({ imports: [BulwarkModule.forRoot({ ... })], controllers: [HelloController] }) class AppModule {}
require('reflect-metadata')
const { Controller, Get, Module, Param } = require('@nestjs/common')
const { NestFactory } = require('@nestjs/core')
const { BulwarkModule, GuardPolicy } = require('bulwark/nestjs')

class HelloController {
  health() {
    return 'ok'
  }
  async hello(name) {
    await new Promise((resolve) => setTimeout(resolve, 5))
    return { hello: name }
  }
}
const method = (decorate, name) =>
  decorate(HelloController.prototype, name, Object.getOwnPropertyDescriptor(HelloController.prototype, name))
method(GuardPolicy({ priority: 'critical' }), 'health') // health checks survive the overload
method(Get('health'), 'health')
method(Get('hello/:name'), 'hello')
Param('name')(HelloController.prototype, 'hello', 0)
Controller()(HelloController)

class AppModule {}
Module({
  imports: [
    BulwarkModule.forRoot({
      limiter: { shared: process.env.BULWARK_SHARED ?? 'nestjs-example' }, // one limiter for every worker of the host
      timeout: 2000, // the interceptor answers in place of a handler slower than this
    }),
  ],
  controllers: [HelloController],
})(AppModule)

NestFactory.create(AppModule, { logger: ['error'] })
  .then(async (app) => {
    await app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1')
    console.log(`listening on ${app.getHttpServer().address().port}`)
  })
  .catch((error) => {
    console.error(error)
    process.exit(1)
  })
