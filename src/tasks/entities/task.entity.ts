import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import { GradeRelease } from '../../submissions/grade-release';

@Entity('tasks')
export class Task {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid' })
  classId: string;

  @Column({ type: 'varchar', length: 200 })
  title: string;

  @Column({ type: 'text', nullable: true })
  description: string | null;

  @Column({ type: 'text', nullable: true })
  sourceText: string | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  startAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  dueAt: Date | null;

  @Column({ type: 'boolean', default: true })
  allowLateSubmission: boolean;

  @Column({ type: 'varchar', length: 10, default: GradeRelease.IMMEDIATE })
  gradeRelease: GradeRelease;

  /** The rubric's maximum, kept by the rubric's writes; null without a rubric. */
  @Column({ type: 'numeric', precision: 12, scale: 2, nullable: true })
  rubricMaxPoints: string | null;

  @Column({ type: 'uuid', array: true, default: () => `'{}'` })
  blockedBy: string[];

  @Column({ type: 'uuid', nullable: true })
  createdBy: string | null;

  @Column({ type: 'boolean', default: false })
  isPublished: boolean;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  publishedAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  deletedAt: Date | null;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}
