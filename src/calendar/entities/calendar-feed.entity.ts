import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** A user's secret calendar feed address; only the SHA-256 of its token is stored. */
@Entity('calendar_feeds')
export class CalendarFeed {
  @PrimaryColumn({ type: 'uuid' })
  userId: string;

  @Column({ type: 'bytea', unique: true })
  tokenHash: Buffer;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  /** When the token was last rotated. */
  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;
}
