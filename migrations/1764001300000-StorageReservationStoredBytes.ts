import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A quota reservation holds the upload's declared size (its Content-Length, multipart envelope included)
 * until the file is stored, then the file's own size: `stored_bytes`, which the final quota check counts.
 */
export class StorageReservationStoredBytes1764001300000 implements MigrationInterface {
  name = 'StorageReservationStoredBytes1764001300000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE storage_reservations ADD COLUMN stored_bytes bigint CHECK (stored_bytes >= 0)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE storage_reservations DROP COLUMN stored_bytes`);
  }
}
