import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export enum NotificationChannelName {
  EMAIL = 'EMAIL',
  WEBHOOK = 'WEBHOOK',
  MESSENGER = 'MESSENGER',
}

/** One per (user, channel). */
@Entity('notification_prefs')
export class NotificationPref {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid' })
  userId: string;

  @Column({ type: 'varchar', length: 10 })
  channel: NotificationChannelName;

  @Column({ type: 'varchar', length: 2048 })
  address: string;

  @Column({ type: 'boolean', default: true })
  isEnabled: boolean;

  /** Signing secret of a WEBHOOK preference (`whsec_…`); null for the other channels. */
  @Column({ type: 'varchar', length: 100, nullable: true })
  secret: string | null;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}
