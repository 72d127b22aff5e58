import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import helmet from 'helmet';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module';
import { createValidationPipe } from './common/errors/validation';
import { AppConfig } from './config/config';

export const JSON_BODY_LIMIT = '1mb';

/** Builds the HTTP application exactly as production runs it; tests call this too. */
export async function createApp(config: AppConfig, databaseUrl: string): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config, databaseUrl), {
    bufferLogs: true,
    bodyParser: false,
  });
  app.useLogger(app.get(Logger));
  app.set('etag', false);
  app.set('x-powered-by', false);
  app.set('trust proxy', 'loopback');
  app.useBodyParser('json', { limit: JSON_BODY_LIMIT });
  app.use(helmet({ contentSecurityPolicy: false, crossOriginResourcePolicy: false }));
  app.enableCors({ origin: config.corsOrigins, exposedHeaders: ['X-Request-Id', 'Retry-After', 'Content-Disposition'] });
  app.useGlobalPipes(createValidationPipe());
  app.enableShutdownHooks();
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
  );
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'openapi.json', raw: ['json'] });
}
