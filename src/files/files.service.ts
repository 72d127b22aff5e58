import { Injectable, Logger } from '@nestjs/common';
import type { Readable } from 'node:stream';
import { AccessService } from '../access/access.service';
import { AppError } from '../common/errors/app-error';
import { FileStorage } from './file-storage';
import { FileUrlSigner, SignedFileUrl } from './file-url-signer';
import { FilesRepository, StoredFileRow } from './files.repository';

export interface FileDownload {
  stream: Readable;
  originalName: string;
  mimeType: string;
  sizeBytes: number | null;
}

/** Downloads of task and submission attachments, each with the access rule of what it is attached to. */
@Injectable()
export class FilesService {
  private readonly logger = new Logger(FilesService.name);

  constructor(
    private readonly files: FilesRepository,
    private readonly access: AccessService,
    private readonly storage: FileStorage,
    private readonly signer: FileUrlSigner,
  ) {}

  /** The file for a caller who may read it (see `authorize`). */
  async open(fileKey: string, userId: string): Promise<FileDownload> {
    return this.read(fileKey, await this.authorize(fileKey, userId));
  }

  /** A signed URL of the file, issued to whoever may read it (see `authorize`). */
  async signedUrl(fileKey: string, userId: string): Promise<SignedFileUrl> {
    await this.authorize(fileKey, userId);
    return this.signer.sign(fileKey);
  }

  /**
   * The file behind a signed URL: the signature is checked first (403), so the answer tells nothing about
   * keys to someone without one; a file deleted since the URL was issued is 404.
   */
  async openSigned(fileKey: string, expires: string, signature: string): Promise<FileDownload> {
    this.signer.verify(fileKey, expires, signature);
    const file = await this.files.findByKey(fileKey);
    if (!file) throw AppError.notFound('File');
    return this.read(fileKey, file);
  }

  /**
   * A task file: anyone who can see the task. A submission file: its submitter, and the OWNER and ADMINs of
   * the class (other members 403). Unknown key 404.
   */
  private async authorize(fileKey: string, userId: string): Promise<StoredFileRow> {
    const file = await this.files.findByKey(fileKey);
    if (!file) throw AppError.notFound('File');
    if (file.submitter_id !== userId) {
      await this.access.requireTaskAccess(file.task_id, userId, { manage: file.submitter_id !== null });
    }
    return file;
  }

  private async read(fileKey: string, file: StoredFileRow): Promise<FileDownload> {
    let stream: Readable;
    try {
      stream = await this.storage.read(fileKey);
    } catch (error) {
      if (error instanceof AppError) throw error;
      this.logger.error({ err: error, fileKey }, 'Attachment row without a readable file');
      throw AppError.notFound('File');
    }
    return {
      stream,
      originalName: file.original_name,
      mimeType: file.mime_type ?? 'application/octet-stream',
      sizeBytes: file.size_bytes === null ? null : Number(file.size_bytes),
    };
  }
}
