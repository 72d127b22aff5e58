import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '../errors/app-error';

/** Bodies the service reads: JSON everywhere, multipart on the upload routes (multer checks those). */
const READ_BODY_TYPES = new Set(['application/json', 'multipart/form-data']);

function hasBody(request: IncomingMessage): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Refuses a body of any other type with 400 VALIDATION_ERROR. The JSON parser skips such a body, so a client
 * that forgets `Content-Type: application/json` (curl -d sends a form type) would otherwise be answered as if
 * it had sent no fields: a PATCH would change nothing and answer 200.
 */
export function requireReadableBodyType(): (
  request: IncomingMessage,
  response: ServerResponse,
  next: (error?: unknown) => void,
) => void {
  return (request, _response, next) => {
    if (!hasBody(request)) return next();
    const type = request.headers['content-type']?.split(';', 1)[0].trim().toLowerCase();
    if (type !== undefined && READ_BODY_TYPES.has(type)) return next();
    next(AppError.validation('Request bodies must be JSON, sent with Content-Type: application/json'));
  };
}
