import { ensureTemplate } from './database';

/**
 * Runs once before all test files: picks the PostgreSQL server (DATABASE_URL, else an embedded one) and
 * builds the migrated template database every test file clones.
 */
export default async function globalSetup(): Promise<void> {
  const adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) throw new Error('Embedded PostgreSQL for tests is being built: set DATABASE_URL');
  process.env.TEST_ADMIN_DATABASE_URL = adminUrl;
  process.env.TEST_TEMPLATE_DATABASE = await ensureTemplate(adminUrl);
}
