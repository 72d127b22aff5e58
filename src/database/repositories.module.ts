import { Global, Module, Provider } from '@nestjs/common';
import { AuthTokensRepository } from '../auth/auth-tokens.repository';
import { ClassesRepository } from '../classes/classes.repository';
import { DeliveriesRepository } from '../notifications/delivery/deliveries.repository';
import { NotificationsRepository } from '../notifications/notifications.repository';
import { SubmissionsRepository } from '../submissions/submissions.repository';
import { TasksRepository } from '../tasks/tasks.repository';
import { UsersRepository } from '../users/users.repository';

/**
 * Every repository, each in the folder of its aggregate, provided once for the whole application: access
 * checks, classes, tasks, submissions, users and auth read each other's tables, and importing the feature
 * modules into each other would make them circular.
 */
const REPOSITORIES: Provider[] = [
  ClassesRepository,
  TasksRepository,
  SubmissionsRepository,
  NotificationsRepository,
  DeliveriesRepository,
  UsersRepository,
  AuthTokensRepository,
];

@Global()
@Module({ providers: REPOSITORIES, exports: REPOSITORIES })
export class RepositoriesModule {}
