import { Injectable, Logger } from '@nestjs/common';
import { AppError, ErrorCode } from '../common/errors/app-error';
import { type AppConfig } from '../config/config';
import { InjectConfig } from '../config/config.module';

export const CAPTCHA_TIMEOUT_MS = 5000;

const unavailable = (): AppError =>
  new AppError(ErrorCode.CAPTCHA_UNAVAILABLE, 'CAPTCHA verification is unavailable, try again later');

/**
 * Checks a CAPTCHA token with the configured verifier (Turnstile, hCaptcha and reCAPTCHA share the form:
 * POST secret/response/remoteip, JSON `{success}`). Does nothing while CAPTCHA is disabled.
 */
@Injectable()
export class CaptchaService {
  private readonly logger = new Logger('Captcha');

  constructor(@InjectConfig() private readonly config: AppConfig) {}

  async verify(token: string | undefined, remoteIp: string | undefined): Promise<void> {
    const { enabled, secret, verifyUrl } = this.config.captcha;
    if (!enabled) return;
    if (!token) throw new AppError(ErrorCode.CAPTCHA_REQUIRED, 'captchaToken is required');
    if (!secret) {
      this.logger.error('CAPTCHA_ENABLED is true but CAPTCHA_SECRET is not set');
      throw unavailable();
    }
    const form = new URLSearchParams({ secret, response: token });
    if (remoteIp) form.set('remoteip', remoteIp);
    let success: unknown;
    try {
      const response = await fetch(verifyUrl, {
        method: 'POST',
        body: form,
        redirect: 'error',
        signal: AbortSignal.timeout(CAPTCHA_TIMEOUT_MS),
      });
      if (!response.ok) throw new Error(`verifier answered ${response.status}`);
      success = ((await response.json()) as { success?: unknown } | null)?.success;
    } catch (error) {
      this.logger.error({ err: error }, 'CAPTCHA verifier unreachable or failing');
      throw unavailable();
    }
    if (typeof success !== 'boolean') {
      this.logger.error('CAPTCHA verifier answered without a boolean "success"');
      throw unavailable();
    }
    if (!success) throw new AppError(ErrorCode.CAPTCHA_FAILED, 'CAPTCHA check failed');
  }
}
