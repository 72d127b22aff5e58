import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

import { ClassRole } from '../../access/class-roles';

// The role type belongs to access, which decides on it; callers holding a membership row find it here too.
export { ClassRole, MANAGER_ROLES } from '../../access/class-roles';

@Entity('class_members')
export class ClassMember {
  @PrimaryColumn({ type: 'uuid' })
  classId: string;

  @PrimaryColumn({ type: 'uuid' })
  userId: string;

  @Column({ type: 'varchar', length: 10 })
  role: ClassRole;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 })
  joinedAt: Date;
}
