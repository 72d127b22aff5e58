import { Module } from '@nestjs/common';
import { MetricsModule } from '../common/metrics/metrics.module';
import { MulterModule } from '@nestjs/platform-express';
import { join } from 'node:path';
import { AccessModule } from '../access/access.module';
import { RunningJobs } from '../common/jobs/running-jobs';
import { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { FileStorage } from './file-storage';
import { TransactionsModule } from '../database/transactions';
import { FilesRepository } from './files.repository';
import { FilesController } from './files.controller';
import { FileSweeper } from './file-sweeper';
import { FileUrlSigner } from './file-url-signer';
import { FilesService } from './files.service';
import { LocalFileStorage } from './local-file-storage';
import { fileStorageEngine } from './multer-storage.engine';
import { Metrics } from '../common/metrics/metrics';
import { S3FileStorage } from './s3-file-storage';
import { StorageQuota } from './storage-quota';

@Module({
  providers: [
    {
      provide: FileStorage,
      inject: [APP_CONFIG],
      useFactory: ({ fileStorage, dataDir }: AppConfig): FileStorage =>
        fileStorage.driver === 's3'
          ? new S3FileStorage(fileStorage.s3)
          : new LocalFileStorage(join(dataDir, 'files')),
    },
  ],
  exports: [FileStorage],
})
export class FileStorageModule {}

/**
 * File storage and what every upload route shares (`@FileUpload()`): the storage quota, and the multer setup
 * of one file part, `UPLOAD_MAX_BYTES` limit, UTF-8 file names. Also the download route GET /files/:fileKey
 * and the sweep of what crashes leave in the storage.
 */
@Module({
  imports: [
    MetricsModule,
    TransactionsModule,
    AccessModule,
    FileStorageModule,
    MulterModule.registerAsync({
      imports: [FileStorageModule, MetricsModule],
      inject: [APP_CONFIG, FileStorage, Metrics],
      useFactory: (config: AppConfig, storage: FileStorage, metrics: Metrics) => ({
        storage: fileStorageEngine(storage, config.uploads.maxBytes, metrics),
        // `file` is the only part an upload takes: any text field is an unknown body field, 400.
        limits: { fileSize: config.uploads.maxBytes, files: 1, fields: 0 },
        defParamCharset: 'utf8',
      }),
    }),
  ],
  controllers: [FilesController],
  providers: [FilesRepository, FilesService, FileUrlSigner, FileSweeper, RunningJobs, StorageQuota],
  exports: [FileStorageModule, MulterModule, StorageQuota],
})
export class FilesModule {}
