import { Column, CreateDateColumn, Entity, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

/** A ticket that opens a live inbox stream, and reopens it until it expires; only its SHA-256 is stored. */
@Entity('notification_stream_tickets')
export class NotificationStreamTicket {
  @PrimaryColumn({ type: 'bytea' })
  ticketHash: Buffer;

  @Column({ type: 'uuid' })
  userId: string;

  /** The user's token version at issue time: a ticket dies with the tokens of its time. */
  @Column({ type: 'integer' })
  tokenVersion: number;

  @Column({ type: 'timestamptz' })
  expiresAt: Date;
}

/** An open live inbox stream on some instance; the instance renews `expiresAt` while it lives. */
@Entity('notification_streams')
export class NotificationStream {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid' })
  userId: string;

  @Column({ type: 'uuid' })
  instanceId: string;

  /** The user's token version when the stream opened (its ticket's); a newer one ends the stream. */
  @Column({ type: 'integer' })
  tokenVersion: number;

  /** The ticket that opened the stream, if any: a new stream on the ticket replaces this one. */
  @Column({ type: 'bytea', nullable: true })
  ticketHash: Buffer | null;

  @Column({ type: 'timestamptz' })
  expiresAt: Date;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;
}
