import {
  Column,
  CreateDateColumn,
  Entity,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';
import { School } from '../../schools/entities/school.entity';

@Entity('users')
export class User {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'varchar', length: 320 })
  email: string;

  @Column({ type: 'varchar', length: 100, select: false })
  passwordHash: string;

  @Column({ type: 'varchar', length: 100, nullable: true })
  nickname: string | null;

  @Column({ type: 'varchar', length: 64, default: 'UTC' })
  timezone: string;

  @Column({ type: 'uuid', nullable: true })
  schoolId: string | null;

  @ManyToOne(() => School, { nullable: true })
  @JoinColumn({ name: 'school_id' })
  school?: School | null;

  @Column({ type: 'varchar', length: 64, nullable: true })
  studentId: string | null;

  @Column({ type: 'boolean', default: true })
  isActive: boolean;

  /** Bumped by password reset/change and deactivation: tokens carrying an older version are rejected. */
  @Column({ type: 'integer', default: 0 })
  tokenVersion: number;

  /**
   * The login token that made the last password change (SHA-256 hex of the token) and its token version: it
   * stays valid beside the tokens of `tokenVersion`. Null after a reset or deactivation, and before any change.
   */
  @Column({ type: 'varchar', length: 64, nullable: true, select: false })
  keptTokenHash: string | null;

  @Column({ type: 'integer', nullable: true, select: false })
  keptTokenVersion: number | null;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}
