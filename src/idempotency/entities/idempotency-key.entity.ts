import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** The first answer to an `Idempotency-Key` of a user; no `responseStatus` while that request is in flight. */
@Entity('idempotency_keys')
export class IdempotencyKey {
  @PrimaryColumn('uuid')
  userId: string;

  @PrimaryColumn({ type: 'varchar', length: 255 })
  key: string;

  @Column({ type: 'varchar', length: 7 })
  requestMethod: string;

  /** The path with its query string. */
  @Column({ type: 'text' })
  requestPath: string;

  /** SHA-256 hex of the body; for a multipart request written when its answer is (see the interceptor). */
  @Column({ type: 'char', length: 64, nullable: true })
  requestFingerprint: string | null;

  /** Set in the request's own transaction: a key whose write committed is never run again. */
  @Column({ type: 'boolean', default: false })
  writeCommitted: boolean;

  @Column({ type: 'smallint', nullable: true })
  responseStatus: number | null;

  @Column({ type: 'text', nullable: true })
  responseContentType: string | null;

  /** The answer's text (every answer of a write is JSON or empty). */
  @Column({ type: 'text', nullable: true })
  responseBody: string | null;

  /** The answer carried credentials: only its status is kept. */
  @Column({ type: 'boolean', default: false })
  responseWithheld: boolean;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;
}
