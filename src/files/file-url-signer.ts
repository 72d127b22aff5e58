import { Injectable } from '@nestjs/common';
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { AppError } from '../common/errors/app-error';
import { type AppConfig } from '../config/config';
import { InjectConfig } from '../config/config.module';

/** HKDF `info` of the signing key: a key of its own, so a signature is never a valid JWT MAC or the reverse. */
const KEY_PURPOSE = 'classroom-tasks/signed-file-url/v1';
const SIGNATURE = /^[A-Za-z0-9_-]{43}$/;
const WHOLE_SECONDS = /^\d{1,12}$/;

export interface SignedFileUrl {
  url: string;
  expiresAt: string;
}

/**
 * Short-lived URLs of one stored file that work without the bearer header (`<img src>` in rendered Markdown):
 * `${PUBLIC_URL}/files/<fileKey>/content?expires=<unix seconds>&signature=<base64url HMAC-SHA256>`, the MAC
 * over the file key and the expiry, with a key derived from the JWT secret. Stateless, so any instance checks
 * what another issued.
 */
@Injectable()
export class FileUrlSigner {
  private readonly key: Buffer;

  constructor(@InjectConfig() private readonly config: AppConfig) {
    this.key = Buffer.from(hkdfSync('sha256', config.jwt.secret, '', KEY_PURPOSE, 32));
  }

  sign(fileKey: string, now = Date.now()): SignedFileUrl {
    // Rounded up: a URL is never valid for less than the configured lifetime.
    const expires = Math.ceil(now / 1000) + this.config.signedFileUrls.ttlSeconds;
    const query = new URLSearchParams({ expires: String(expires), signature: this.mac(fileKey, expires) });
    return {
      url: `${this.config.publicUrl}/files/${encodeURIComponent(fileKey)}/content?${query}`,
      expiresAt: new Date(expires * 1000).toISOString(),
    };
  }

  /** 403 unless `signature` is this service's for `fileKey` and `expires` has not passed. */
  verify(fileKey: string, expires: string, signature: string): void {
    const valid =
      WHOLE_SECONDS.test(expires) &&
      SIGNATURE.test(signature) &&
      timingSafeEqual(Buffer.from(signature), Buffer.from(this.mac(fileKey, Number(expires))));
    if (!valid) throw AppError.forbidden('Invalid file URL signature');
    if (Number(expires) * 1000 <= Date.now()) throw AppError.forbidden('The file URL has expired');
  }

  private mac(fileKey: string, expires: number): string {
    return createHmac('sha256', this.key).update(`${fileKey}\n${expires}`).digest('base64url');
  }
}
