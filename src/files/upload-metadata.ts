import { AppError } from '../common/errors/app-error';
import { UploadedFileInfo } from './multer-storage.engine';

/** Column limit of `original_name` and `mime_type` in task_attachments and submission_attachments. */
export const ATTACHMENT_NAME_MAX_LENGTH = 255;
/** A media type as a header may carry it; anything else is served as application/octet-stream. */
const MEDIA_TYPE = /^[\w!#$&^.+-]+\/[\w!#$&^.+-]+(?:\s*;\s*[\w!#$&^.+-]+=(?:[\w!#$&^.+-]+|"[^"\\\r\n]*"))*$/;
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/g;

/**
 * The name and media type an upload is stored with: the UTF-8 name without control characters, 1 to 255
 * characters (else 400 VALIDATION_ERROR); a media type that is not header-safe becomes application/octet-stream.
 */
export function uploadMetadata(file: UploadedFileInfo): { originalName: string; mimeType: string } {
  const originalName = file.originalname.replace(CONTROL_CHARACTERS, '').trim();
  if (originalName.length === 0 || originalName.length > ATTACHMENT_NAME_MAX_LENGTH) {
    throw AppError.validation(`The file name must be 1 to ${ATTACHMENT_NAME_MAX_LENGTH} characters`);
  }
  const mimeType =
    MEDIA_TYPE.test(file.mimetype) && file.mimetype.length <= ATTACHMENT_NAME_MAX_LENGTH
      ? file.mimetype.toLowerCase()
      : 'application/octet-stream';
  return { originalName, mimeType };
}
