import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import { NotificationChannelName } from './notification-pref.entity';

export enum DeliveryStatus {
  PENDING = 'PENDING',
  SENT = 'SENT',
  FAILED = 'FAILED',
  /** Left unsent: out of date when its turn came (see the outbox claim). */
  SKIPPED = 'SKIPPED',
}

/** The event a user's delivery carries: a notification's type, or TEST (`POST …/notification-prefs/:channel/test`). */
export const TEST_EVENT = 'TEST';
/** A daily digest: one e-mail listing the notifications since the previous one (no notification of its own). */
export const DIGEST_DELIVERY = 'DIGEST';
/** The `last_error` of an e-mail left for the digest (SKIPPED until a digest lists it). */
export const LEFT_FOR_DIGEST = 'DIGEST';
/** The types of deliveries that carry no notification; no notification type may take these names. */
export const DELIVERY_KINDS = [TEST_EVENT, DIGEST_DELIVERY] as const;
/** A registered notification type's name, TEST or DIGEST. */
export type DeliveryType = string;

/** A mail that carries its own content (account e-mails) instead of a notification's. */
export interface MailPayload {
  subject: string;
  text: string;
  html: string | null;
}

/**
 * An account mail as the outbox keeps it: its text and HTML carry a one-time link (a live token), so they are
 * kept sealed (`SealedText`, bound to the address) as the JSON of `{text, html}`, opened only to send it.
 */
export interface SealedMailPayload {
  subject: string;
  sealed: string;
}

/** The payload column: sealed, or in clear for a mail queued by a version that did not seal. */
export type KeptMailPayload = SealedMailPayload | MailPayload;

/** The outbox: one send of one notification (or account mail) over one channel, retried until done. */
@Entity('notification_deliveries')
export class NotificationDelivery {
  /** Also the `webhook-id` (unless a redelivery): the same on every retry, so receivers can deduplicate. */
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** null for TEST events, digests and account e-mails. */
  @Column({ type: 'uuid', nullable: true })
  notificationId: string | null;

  /** Whose log the delivery is in; null for account e-mails, which are no one's log (they carry tokens). */
  @Column({ type: 'uuid', nullable: true })
  userId: string | null;

  /** null for account e-mails. */
  @Column({ type: 'varchar', length: 30, nullable: true })
  type: DeliveryType | null;

  /** A redelivery: the first delivery of the chain, whose id is the `webhook-id` of every redelivery. */
  @Column({ type: 'uuid', nullable: true })
  originalId: string | null;

  @Column({ type: 'varchar', length: 10 })
  channel: NotificationChannelName;

  @Column({ type: 'varchar', length: 2048 })
  address: string;

  @Column({ type: 'jsonb', nullable: true })
  payload: KeptMailPayload | null;

  @Column({ type: 'varchar', length: 10, default: DeliveryStatus.PENDING })
  status: DeliveryStatus;

  /** Claims so far; the claim that made the current attempt carries this number. */
  @Column({ type: 'integer', default: 0 })
  attempts: number;

  @Column({ type: 'timestamptz', precision: 3, default: () => 'now()' })
  nextAttemptAt: Date;

  /** Lease of the worker holding the claim; a crashed worker's claim is retaken once it has passed. */
  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  lockedUntil: Date | null;

  @Column({ type: 'text', nullable: true })
  lastError: string | null;

  /** PENDING only because of the recipient's quiet hours, until `nextAttemptAt` (their end). */
  @Column({ type: 'boolean', default: false })
  held: boolean;

  /** An e-mail left for the digest (SKIPPED, `DIGEST`): the DIGEST delivery that listed it; null until then. */
  @Column({ type: 'uuid', nullable: true })
  digestId: string | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  sentAt: Date | null;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}
