import type { Request } from 'express';
import type { StorageEngine } from 'multer';
import { FileStorage } from './file-storage';

/** The multer file as handlers see it: `key` names the stored object. */
export interface UploadedFileInfo extends Express.Multer.File {
  key: string;
}

/** Streams multipart file parts straight into FileStorage; nothing is buffered in memory or in a temp dir. */
export function fileStorageEngine(storage: FileStorage, maxBytes: number): StorageEngine {
  return {
    _handleFile(_req: Request, file: Express.Multer.File, callback) {
      storage.put(file.stream, maxBytes).then(
        (stored) => callback(null, { key: stored.key, size: stored.sizeBytes } as Partial<UploadedFileInfo>),
        (error: unknown) => callback(error as Error),
      );
    },
    _removeFile(_req: Request, file: Express.Multer.File, callback) {
      const key = (file as UploadedFileInfo).key;
      storage.remove(key ? [key] : []).then(() => callback(null), callback);
    },
  };
}
