import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/**
 * Bytes an upload in flight holds against its user's storage quota, from before its first byte until its
 * attachment row is written or it fails: its declared size, then, once the file is stored, the file's. One a crash leaves behind stops counting after the sweep's grace
 * period and is deleted by the sweep.
 */
@Entity('storage_reservations')
export class StorageReservation {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid' })
  userId: string;

  /** bigint comes back from pg as a string. */
  @Column({ type: 'bigint' })
  bytes: string;

  /** The stored file's size, once it is stored; null before. */
  @Column({ type: 'bigint', nullable: true })
  storedBytes: string | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;
}
