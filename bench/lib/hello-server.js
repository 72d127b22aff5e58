#!/usr/bin/env node
/*
 * A minimal server answering GET /hello with {"status":"ok"}, built the way argv[2] names; listens on
 * 127.0.0.1:argv[3] and writes "ready" to file descriptor 3 once listening. Kinds:
 *   node            bare node:http
 *   express         bare Express 5
 *   nest            bare NestJS on @nestjs/platform-express, one controller
 *   nest+helmet     + helmet and CORS as src/bootstrap.ts sets them up
 *   nest+pino-http  + nestjs-pino's LoggerModule with pino-http, as the service logged requests before
 *                   (child logger and AsyncLocalStorage context per request)
 *   nest+log        + the service's own request logging (dist/common/http/logger.js `logRequests`)
 *   nest+stack      the service's HTTP stack without guards and database: settings, request log, JSON body
 *                   parser, helmet, CORS and the global validation pipe of src/bootstrap.ts
 * Log lines go to stdout (the caller points it at /dev/null).
 */
'use strict';
require('reflect-metadata');
const { writeSync } = require('node:fs');
const { join } = require('node:path');

const [kind, portText] = process.argv.slice(2);
const port = Number(portText);
const DIST = join(__dirname, '..', '..', 'dist');
const BODY = JSON.stringify({ status: 'ok' });
const ready = () => writeSync(3, 'ready\n');

async function nest(layers) {
  const { Controller, Get, Module } = require('@nestjs/common');
  const { NestFactory } = require('@nestjs/core');
  class HelloController {
    hello() {
      return { status: 'ok' };
    }
  }
  Get()(
    HelloController.prototype,
    'hello',
    Object.getOwnPropertyDescriptor(HelloController.prototype, 'hello'),
  );
  Controller('hello')(HelloController);
  const imports = [];
  if (layers.includes('pino-http')) {
    const { LoggerModule } = require('nestjs-pino');
    const { requestId } = require(join(DIST, 'common', 'http', 'logger'));
    imports.push(
      LoggerModule.forRoot({
        pinoHttp: {
          level: 'info',
          genReqId: requestId,
          customLogLevel: (_req, res, err) =>
            err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
          serializers: {
            req: (req) => ({ id: req.id, method: req.method, url: req.url }),
            res: (res) => ({ statusCode: res.statusCode }),
          },
        },
      }),
    );
  }
  class HelloModule {}
  Module({ imports, controllers: [HelloController] })(HelloModule);
  const stack = layers.includes('stack');
  const app = await NestFactory.create(HelloModule, { logger: false, bodyParser: !stack });
  if (layers.includes('log') || stack) {
    const pino = require('pino');
    const { logRequests } = require(join(DIST, 'common', 'http', 'logger'));
    if (stack) {
      app.set('etag', false);
      app.set('x-powered-by', false);
      app.set('trust proxy', 'loopback');
    }
    app.use(logRequests(pino({ level: 'info' })));
  }
  if (stack) {
    const { JSON_BODY_LIMIT } = require(join(DIST, 'bootstrap'));
    const { createValidationPipe } = require(join(DIST, 'common', 'errors', 'validation'));
    app.useBodyParser('json', { limit: JSON_BODY_LIMIT });
    app.useGlobalPipes(createValidationPipe());
  }
  if (layers.includes('helmet') || stack) {
    const helmet = require('helmet');
    app.use((helmet.default ?? helmet)({ contentSecurityPolicy: false, crossOriginResourcePolicy: false }));
    app.enableCors({ origin: true, exposedHeaders: ['X-Request-Id', 'Retry-After', 'Content-Disposition'] });
  }
  await app.listen(port, '127.0.0.1');
  ready();
}

const servers = {
  node: () =>
    require('node:http')
      .createServer((req, res) => {
        res.writeHead(200, {
          'Content-Type': 'application/json; charset=utf-8',
          'Content-Length': Buffer.byteLength(BODY),
        });
        res.end(BODY);
      })
      .listen(port, '127.0.0.1', ready),
  express: () => {
    const app = require('express')();
    app.get('/hello', (req, res) => res.json({ status: 'ok' }));
    app.listen(port, '127.0.0.1', ready);
  },
  nest: () => nest([]),
  'nest+helmet': () => nest(['helmet']),
  'nest+pino-http': () => nest(['pino-http']),
  'nest+log': () => nest(['log']),
  'nest+stack': () => nest(['stack']),
};

if (!servers[kind]) {
  console.error(`usage: hello-server.js <${Object.keys(servers).join('|')}> <port>`);
  process.exit(2);
}
servers[kind]();
