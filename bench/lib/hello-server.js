#!/usr/bin/env node
/*
 * A minimal server answering GET /hello with {"status":"ok"}, built the way named by argv[2]:
 *   node          bare node:http
 *   express       bare Express 5
 *   nest          bare NestJS 11 on @nestjs/platform-express, one controller
 *   nest+helmet   + helmet and CORS as src/bootstrap.ts sets them up
 *   nest+pino     + nestjs-pino with the service's own logger options (dist/), one info line per request
 *   nest+all      both of the above, plus the global validation pipe and the settings of src/bootstrap.ts
 * Listens on 127.0.0.1:argv[3] and prints "ready" on stdout... no: writes "ready\n" to fd 3 when listening.
 */
'use strict';
require('reflect-metadata');
const { writeSync } = require('node:fs');
const { join } = require('node:path');

const [kind, portText] = process.argv.slice(2);
const port = Number(portText);
const BODY = JSON.stringify({ status: 'ok' });
const ready = () => writeSync(3, 'ready\n');

async function nest(layers) {
  const { Controller, Get, Module } = require('@nestjs/common');
  const { NestFactory } = require('@nestjs/core');
  const dist = join(__dirname, '..', '..', 'dist');
  class HelloController {
    hello() {
      return { status: 'ok' };
    }
  }
  const method = Object.getOwnPropertyDescriptor(HelloController.prototype, 'hello');
  Get()(HelloController.prototype, 'hello', method);
  Controller('hello')(HelloController);
  const imports = [];
  if (layers.has('pino')) {
    const { LoggerModule } = require('nestjs-pino');
    const { loggerOptions } = require(join(dist, 'common', 'http', 'logger'));
    imports.push(LoggerModule.forRoot(loggerOptions({ logLevel: 'info' })));
  }
  class HelloModule {}
  Module({ imports, controllers: [HelloController] })(HelloModule);
  const app = await NestFactory.create(HelloModule, { logger: false, bodyParser: !layers.has('all') });
  if (layers.has('all')) {
    const { JSON_BODY_LIMIT } = require(join(dist, 'bootstrap'));
    const { createValidationPipe } = require(join(dist, 'common', 'errors', 'validation'));
    app.set('etag', false);
    app.set('x-powered-by', false);
    app.set('trust proxy', 'loopback');
    app.useBodyParser('json', { limit: JSON_BODY_LIMIT });
    app.useGlobalPipes(createValidationPipe());
  }
  if (layers.has('pinohttp')) {
    const { pinoHttp } = require('pino-http');
    const { loggerOptions } = require(join(dist, 'common', 'http', 'logger'));
    app.use(pinoHttp(loggerOptions({ logLevel: 'info' }).pinoHttp));
  }
  if (layers.has('pinohttpnowrap')) {
    const { pinoHttp } = require('pino-http');
    const { loggerOptions } = require(join(dist, 'common', 'http', 'logger'));
    app.use(pinoHttp({ ...loggerOptions({ logLevel: 'info' }).pinoHttp, wrapSerializers: false }));
  }
  if (layers.has('custom')) {
    const pino = require('pino');
    const { requestId } = require(join(dist, 'common', 'http', 'logger'));
    const logger = pino({ level: 'info' });
    app.use((req, res, next) => {
      const started = Date.now();
      const id = requestId(req, res);
      req.id = id;
      res.once('finish', () => logger.info({ req: { id, method: req.method, url: req.originalUrl }, res: { statusCode: res.statusCode }, responseTime: Date.now() - started }, 'request completed'));
      next();
    });
  }
  if (layers.has('als')) {
    const { AsyncLocalStorage } = require('node:async_hooks');
    const storage = new AsyncLocalStorage();
    app.use((req, res, next) => storage.run({}, next));
  }
  if (layers.has('helmet') || layers.has('helmetonly')) {
    const helmet = require('helmet');
    app.use((helmet.default ?? helmet)({ contentSecurityPolicy: false, crossOriginResourcePolicy: false }));
  }
  if (layers.has('helmet') || layers.has('cors')) {
    app.enableCors({ origin: true, exposedHeaders: ['X-Request-Id', 'Retry-After', 'Content-Disposition'] });
  }
  await app.listen(port, '127.0.0.1');
}

const servers = {
  node: async () => {
    const http = require('node:http');
    http
      .createServer((req, res) => {
        res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(BODY) });
        res.end(BODY);
      })
      .listen(port, '127.0.0.1', ready);
    return false;
  },
  express: async () => {
    const express = require('express');
    const app = express();
    app.get('/hello', (req, res) => res.json({ status: 'ok' }));
    app.listen(port, '127.0.0.1', ready);
    return false;
  },
  nest: () => nest(new Set()),
  'nest+helmet': () => nest(new Set(['helmet'])),
  'nest+helmetonly': () => nest(new Set(['helmetonly'])),
  'nest+cors': () => nest(new Set(['cors'])),
  'nest+pinohttp': () => nest(new Set(['pinohttp'])),
  'nest+pinohttpnowrap': () => nest(new Set(['pinohttpnowrap'])),
  'nest+custom': () => nest(new Set(['custom'])),
  'nest+als': () => nest(new Set(['als'])),
  'nest+pino': () => nest(new Set(['pino'])),
  'nest+all': () => nest(new Set(['helmet', 'pino', 'all'])),
};

if (!servers[kind]) {
  console.error(`usage: hello-server.js <${Object.keys(servers).join('|')}> <port>`);
  process.exit(2);
}
servers[kind]().then((listening) => {
  if (listening !== false) ready();
});
