import { Logger } from '@nestjs/common';
import { createApp } from './bootstrap';
import { ConfigError, loadConfig } from './config/config';
import { resolveDatabase } from './database/embedded-postgres';

async function main(): Promise<void> {
  const config = loadConfig();
  const database = await resolveDatabase(config);
  const app = await createApp(config, database.url);
  // The embedded database stops after Nest has closed its connections.
  app.get(Logger, { strict: false });
  process.once('beforeExit', () => void database.stop());
  await app.listen(config.port);
  new Logger('Main').log(`Listening on :${config.port}${database.embedded ? ' (embedded PostgreSQL)' : ''}`);
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    console.error(error.message);
  } else {
    console.error(error);
  }
  process.exit(1);
});
