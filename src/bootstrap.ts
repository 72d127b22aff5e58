import { LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import {
  DocumentBuilder,
  getSchemaPath,
  OpenAPIObject,
  OperationObject,
  SchemaObject,
  SwaggerModule,
} from '@nestjs/swagger';
import helmet from 'helmet';
import { Logger, PinoLogger } from 'nestjs-pino';
import type { Logger as Pino } from 'pino';
import { AppExtension, AppModule } from './app.module';
import { ErrorResponse } from './common/errors/error.response';
import { createValidationPipe } from './common/errors/validation';
import { requireReadableBodyType } from './common/http/body-type';
import { rejectDeepJson } from './common/http/json-depth';
import { AnswerAdapter } from './common/http/answer-adapter';
import { loggerOptions, logRequests } from './common/http/logger';
import { recordRequests } from './common/metrics/http-metrics';
import { Metrics } from './common/metrics/metrics';
import { answerClientErrors, applyServerTimeouts } from './common/http/slow-clients';
import { AppConfig } from './config/config';
import type { Clock } from './config/clock';
import { IDEMPOTENCY_EXTENSION } from './idempotency/idempotent-write.decorator';
import { DELIVERY_KINDS } from './notifications/entities/notification-delivery.entity';
import { documentNotificationTypes } from './notifications/production/notification-types';
import { runMigrationsLocked } from './database/migrate';
import { sessionUrl } from './database/typeorm-options';

export const JSON_BODY_LIMIT = '1mb';

/** The pino-backed Nest logger: bootstrap messages, the exception filter and `new Logger(ctx)` all use it. */
export function createLogger(config: AppConfig): LoggerService {
  return new Logger(new PinoLogger(loggerOptions(config)), {});
}

/** The root pino logger behind `createLogger` (nestjs-pino keeps one per process). */
function rootLogger(config: AppConfig): Pino {
  return new PinoLogger(loggerOptions(config)).logger;
}

/**
 * Builds the HTTP application exactly as production runs it; tests call this too. Shutdown on signals is
 * the caller's: `main.ts` closes the app, then the embedded database, then exits. `extensions` are mounted
 * beside the core modules, their migrations applied with the core's (production mounts none); `clock` replaces
 * the system clock for schedules and deliveries (tests).
 */
export async function createApp(
  config: AppConfig,
  databaseUrl: string,
  { extensions = [], clock }: { extensions?: readonly AppExtension[]; clock?: Clock } = {},
): Promise<NestExpressApplication> {
  const logger = createLogger(config);
  if (config.database.migrationsRun) {
    const extraMigrations = extensions.flatMap((extension) => extension.migrations);
    await runMigrationsLocked(config, sessionUrl(config, databaseUrl), logger, extraMigrations);
  }
  const module = AppModule.forRoot(config, databaseUrl, extensions, clock);
  // Every answer is sent through AnswerAdapter: it tags JSON answers (ETag, 304) and shows a keyed request's
  // answer to its Idempotency-Key before sending it.
  const app = await NestFactory.create<NestExpressApplication>(module, new AnswerAdapter(), {
    logger,
    bodyParser: false,
    // A failed start rejects (the caller stops the embedded database) instead of exiting the process.
    abortOnError: false,
  });
  app.set('etag', false);
  app.set('x-powered-by', false);
  app.set('trust proxy', config.trustProxy);
  const requestLogger = rootLogger(config);
  app.use(logRequests(requestLogger, { traced: config.tracing.endpoint !== null }));
  const metrics = app.get(Metrics);
  if (metrics.enabled) app.use(recordRequests(metrics));
  answerClientErrors(app.getHttpServer(), requestLogger);
  applyServerTimeouts(app.getHttpServer(), config.http);
  // Before the body is read: an answer refused while reading or parsing it (malformed JSON, over the limit,
  // an unreadable charset) carries the security and CORS headers too, so a browser page can read its error.
  app.use(helmet({ contentSecurityPolicy: false, crossOriginResourcePolicy: false }));
  app.enableCors({
    origin: config.corsOrigins,
    exposedHeaders: ['X-Request-Id', 'Retry-After', 'Content-Disposition', 'ETag', 'Idempotent-Replayed'],
    maxAge: config.corsMaxAgeSeconds,
  });
  app.use(requireReadableBodyType());
  app.useBodyParser('json', { limit: JSON_BODY_LIMIT });
  app.use(rejectDeepJson);
  app.useGlobalPipes(createValidationPipe());
  setupOpenApi(app);
  return app;
}

function setupOpenApi(app: NestExpressApplication): void {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Classroom Task Service')
      .setDescription('Classes, tasks, submissions and notifications. Errors are always `{error, code}`.')
      .setVersion('1')
      .addBearerAuth()
      .addSecurityRequirements('bearer')
      .build(),
    { extraModels: [ErrorResponse] },
  );
  documentPlatformRules(document);
  documentSafeRetries(document);
  documentErrorBodies(document);
  documentNotificationTypes(document, DELIVERY_KINDS);
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'openapi.json', raw: ['json'] });
}

/** Path parameters named `id` or `…Id` go through a UUID pipe (a malformed one is 400 VALIDATION_ERROR). */
const UUID_PATH_PARAMETER = /^(id|\w+Id)$/;

/**
 * Rules the platform applies to every route, which no route's decorators state: path ids are UUIDs, and a
 * JSON body over 1 MiB is refused with 413. Their error bodies are added below.
 */
function documentPlatformRules(document: OpenAPIObject): void {
  for (const operations of Object.values(document.paths)) {
    for (const operation of Object.values(operations as Record<string, OperationObject>)) {
      for (const parameter of operation.parameters ?? []) {
        if ('in' in parameter && parameter.in === 'path' && UUID_PATH_PARAMETER.test(parameter.name)) {
          parameter.schema = { type: 'string', format: 'uuid' };
        }
      }
      const body = operation.requestBody;
      if (body && 'content' in body && body.content['application/json'] && !operation.responses['413']) {
        operation.responses['413'] = { description: 'PAYLOAD_TOO_LARGE: JSON body over 1 MiB' };
      }
      // Any route, whatever it does: the HTTP server's time limits and a database that does not answer.
      operation.responses['408'] ??= {
        description: 'REQUEST_TIMEOUT: the request was not received in time (HTTP_REQUEST_TIMEOUT_MS)',
      };
      operation.responses['503'] ??= {
        description: 'SERVICE_UNAVAILABLE: the database does not answer; retry after Retry-After seconds',
      };
    }
  }
}

/**
 * Safe retries and conditional requests as the routes declare them: `Idempotency-Key` on each write marked `@IdempotentWrite()` (the
 * `x-idempotency-key` extension it sets), with its 409 and 422 and the `Idempotent-Replayed` header of a
 * replay; the `ETag` of every answer of a route that documents a 304 or a 412 (`@ApiNotModifiedResponse()`,
 * `@IfMatchRoute()`).
 */
function documentSafeRetries(document: OpenAPIObject): void {
  for (const operations of Object.values(document.paths)) {
    for (const operation of Object.values(operations as Record<string, OperationObject>)) {
      if (operation.responses['304'] || operation.responses['412']) {
        addSuccessHeader(operation, 'ETag', 'Strong tag of this answer', { type: 'string' });
      }
      const idempotency = (operation as unknown as Record<string, unknown>)[IDEMPOTENCY_EXTENSION] as
        { answer: string } | undefined;
      if (!idempotency || idempotency.answer === 'none') continue;
      operation.parameters = [
        ...(operation.parameters ?? []),
        {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            'Makes a retry safe: the first answer is kept 24 h per user and key and answered again to a repeat',
          schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
        },
      ];
      addSuccessHeader(
        operation,
        'Idempotent-Replayed',
        '`true` on an answer kept from the first request with this Idempotency-Key',
        { type: 'string', enum: ['true'] },
      );
      operation.responses['409'] ??= {
        description:
          idempotency.answer === 'withheld'
            ? 'CONFLICT: a request with this Idempotency-Key is still in progress; ' +
              'IDEMPOTENCY_ANSWER_NOT_KEPT: it was carried out, and its answer (a credential) is not kept'
            : 'CONFLICT: a request with this Idempotency-Key is still in progress',
      };
      operation.responses['422'] = {
        description: 'IDEMPOTENCY_KEY_REUSED: the Idempotency-Key was used for another request',
      };
    }
  }
}

function addSuccessHeader(
  operation: OperationObject,
  name: string,
  description: string,
  schema: SchemaObject,
): void {
  for (const [status, response] of Object.entries(operation.responses)) {
    if (/^2/.test(status) && response && !('$ref' in response)) {
      response.headers = { ...response.headers, [name]: { description, schema } };
    }
  }
}

/**
 * Every error answer is JSON `{error, code}`, whatever the route produces on success (the CSV
 * export, file downloads) and whether or not its decorator named a type.
 */
function documentErrorBodies(document: OpenAPIObject): void {
  const schema = { $ref: getSchemaPath(ErrorResponse) };
  for (const operations of Object.values(document.paths)) {
    for (const operation of Object.values(operations as Record<string, OperationObject>)) {
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        if (response && Number(status) >= 400 && !('$ref' in response)) {
          response.content = { 'application/json': { schema } };
        }
      }
    }
  }
}
