import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

export enum TokenPurpose {
  REGISTRATION = 'REGISTRATION',
  PASSWORD_RESET = 'PASSWORD_RESET',
  EMAIL_CHANGE = 'EMAIL_CHANGE',
}

/** A single-use e-mailed token; only its SHA-256 hash is stored. */
@Entity('auth_tokens')
export class AuthToken {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'varchar', length: 20 })
  purpose: TokenPurpose;

  @Column({ type: 'char', length: 64 })
  tokenHash: string;

  /** Address the token was sent to: the new address for EMAIL_CHANGE. */
  @Column({ type: 'varchar', length: 320 })
  email: string;

  @Column({ type: 'uuid', nullable: true })
  userId: string | null;

  @Column({ type: 'timestamptz', precision: 3 })
  expiresAt: Date;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  usedAt: Date | null;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 })
  createdAt: Date;
}
