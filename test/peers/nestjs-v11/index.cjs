// NestJS 11 as this package resolves it (its own node_modules), not as the repository's root does.
'use strict'
require('reflect-metadata')
module.exports = {
  common: require('@nestjs/common'),
  core: require('@nestjs/core'),
  ExpressAdapter: require('@nestjs/platform-express').ExpressAdapter,
  FastifyAdapter: require('@nestjs/platform-fastify').FastifyAdapter,
}
