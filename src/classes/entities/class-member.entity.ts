import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export enum ClassRole {
  OWNER = 'OWNER',
  ADMIN = 'ADMIN',
  MEMBER = 'MEMBER',
}

export const MANAGER_ROLES: readonly ClassRole[] = [ClassRole.OWNER, ClassRole.ADMIN];

@Entity('class_members')
export class ClassMember {
  @PrimaryColumn({ type: 'uuid' })
  classId: string;

  @PrimaryColumn({ type: 'uuid' })
  userId: string;

  @Column({ type: 'varchar' })
  role: ClassRole;

  @CreateDateColumn({ type: 'timestamptz' })
  joinedAt: Date;
}
