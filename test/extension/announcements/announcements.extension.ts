import { AnnouncementsModule } from './announcements.module';
import { Announcements1764005000000 } from './migrations/1764005000000-Announcements';

/**
 * The example extension as an app mounts it (`createTestApp(env, { extensions: [ANNOUNCEMENTS] })`): the
 * module and the migrations of its table. Typed by `AppExtension` where it is mounted; this folder imports no
 * file of the composition root.
 */
export const ANNOUNCEMENTS = {
  module: AnnouncementsModule,
  migrations: [Announcements1764005000000],
};
