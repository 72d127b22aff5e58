import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('task_user_states')
export class TaskUserState {
  @PrimaryColumn({ type: 'uuid' })
  taskId: string;

  @PrimaryColumn({ type: 'uuid' })
  userId: string;

  @Column({ type: 'timestamptz', nullable: true })
  viewedAt: Date | null;

  @Column({ type: 'varchar', array: true, default: () => `'{}'` })
  tags: string[];

  @Column({ type: 'double precision', nullable: true })
  sortOrder: number | null;
}
