import { AppConfig } from '../config/config';

export interface ResolvedDatabase {
  url: string;
  embedded: boolean;
  stop(): Promise<void>;
}

/** The configured DATABASE_URL, or an embedded PostgreSQL started under DATA_DIR when none is set. */
export async function resolveDatabase(config: AppConfig): Promise<ResolvedDatabase> {
  if (config.database.url) return { url: config.database.url, embedded: false, stop: async () => undefined };
  throw new Error('Embedded PostgreSQL is being built: set DATABASE_URL');
}
