import { AiConfig, aiConfig } from './ai.config';
import { AppCoreConfig, appCoreConfig } from './app.config';
import { AuthConfig, authConfig, LoadedAuthConfig } from './auth.config';
import { DatabaseConfig, databaseConfig } from './database.config';
import { Env } from './env';
import { ExportsConfig, exportsConfig } from './exports.config';
import { FilesConfig, filesConfig } from './files.config';
import { HttpConfig, httpConfig } from './http.config';
import { MailConfig, mailConfig } from './mail.config';
import { NotificationsConfig, notificationsConfig } from './notifications.config';
import { ObservabilityConfig, observabilityConfig } from './observability.config';
import { SubmissionsConfig, submissionsConfig } from './submissions.config';

export { ConfigError } from './env';
export type { Env } from './env';

/**
 * The whole configuration of the service, read once from the environment and validated, one area per
 * `*.config.ts` file beside this one (each lists its variables and defaults). Every area of the code reads its
 * own typed slice; nothing else reads `process.env`.
 */
export interface AppConfig
  extends
    AppCoreConfig,
    HttpConfig,
    DatabaseConfig,
    AuthConfig,
    MailConfig,
    AiConfig,
    NotificationsConfig,
    FilesConfig,
    ExportsConfig,
    SubmissionsConfig,
    ObservabilityConfig {}

/** The configuration before the start step `prepareDataDir`: a null JWT secret is the development one. */
export type LoadedConfig = Omit<AppConfig, 'jwt'> & Pick<LoadedAuthConfig, 'jwt'>;

/**
 * Reads and validates `env`, and does nothing else: no file, directory or secret is made and nothing is
 * logged, so the TypeORM CLI, tools and tests may load it freely. A bad value throws a `ConfigError`.
 */
export function loadConfig(env: Env = process.env): LoadedConfig {
  const core = appCoreConfig(env);
  return {
    ...core,
    ...httpConfig(env),
    ...databaseConfig(env),
    ...authConfig(env, core.nodeEnv),
    ...mailConfig(env),
    ...aiConfig(env),
    ...notificationsConfig(env),
    ...filesConfig(env),
    ...exportsConfig(env),
    ...submissionsConfig(env),
    ...observabilityConfig(env),
  };
}
