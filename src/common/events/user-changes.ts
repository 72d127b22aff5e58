import { Injectable, Module } from '@nestjs/common';

export type UserChangeListener = (userId: string) => void;

/**
 * Tells this instance's readers of users (the token-user cache of auth) that a writer outside them changed a
 * user, right after the commit. It lets users depend on no reader: the readers subscribe here.
 */
@Injectable()
export class UserChanges {
  private readonly listeners: UserChangeListener[] = [];

  subscribe(listener: UserChangeListener): void {
    this.listeners.push(listener);
  }

  changed(userId: string): void {
    for (const listener of this.listeners) listener(userId);
  }
}

/** One instance per application: every module importing it shares the same listeners. */
@Module({ providers: [UserChanges], exports: [UserChanges] })
export class UserChangesModule {}
