/** A member's role in a class (`class_members.role`): what the access rules of every module decide on. */
export enum ClassRole {
  OWNER = 'OWNER',
  ADMIN = 'ADMIN',
  MEMBER = 'MEMBER',
}

export const MANAGER_ROLES: readonly ClassRole[] = [ClassRole.OWNER, ClassRole.ADMIN];
