import { CallHandler, ExecutionContext, Injectable, Logger, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { Observable, of } from 'rxjs';
import { observeAnswer, OutgoingAnswer, WholeAnswer } from '../common/http/answer-adapter';
import { AuthUser } from '../common/decorators/current-user.decorator';
import { AppError, ErrorCode } from '../common/errors/app-error';
import { SealedText } from '../common/utils/sealed-text';
import { IDEMPOTENCY_KEY_HEADER } from '../common/http/idempotency-key';
import { type AppConfig } from '../config/config';
import { InjectConfig } from '../config/config.module';
import { outsideKeyedWork } from '../database/keyed-writes';
import { Tx, withStepBeforeEachCommit } from '../database/transactions';
import { IdempotencyKeysRepository, KeptKey, KeyClaim } from './idempotency-keys.repository';
import {
  fingerprintKey,
  FilePart,
  jsonFingerprint,
  multipartFingerprint,
  readMultipartFingerprint,
} from './request-fingerprint';

/** Metadata of a route whose answer carries credentials (`@IdempotentWrite`): why it is not kept. */
export const ANSWER_WITHHELD = 'idempotency:answerWithheld';

/** How long a key's first answer is kept. */
export const IDEMPOTENCY_RETENTION_SECONDS = 24 * 60 * 60;
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH']);
/** 1 to 255 visible ASCII characters. */
const KEY_FORMAT = /^[\x21-\x7e]{1,255}$/;
/** Beyond the HTTP request timeout, a claim without an answer belongs to an instance that stopped. */
const ABANDONED_MARGIN_SECONDS = 60;

/**
 * `Idempotency-Key` on every authenticated POST, PUT and PATCH, for every route without code
 * of its own. The first request claims the key in PostgreSQL (one statement, which decides between
 * concurrent requests on any instance) and runs; every transaction it opens marks the key as committed in
 * that transaction, so a key whose write committed is never run again, whatever happens afterwards (the
 * client leaving, the instance dying before the answer is kept). Its answer is stored before it is sent, so
 * a repeat that follows the answer always finds it. A repeat of the same request answers the stored status
 * and body with `Idempotent-Replayed: true`; another request with the key → 422; a repeat while the first
 * runs → 409, also after its client left: the key is never given up while the request may still commit.
 * Answers 5xx and 429 of a request whose write did not commit are not kept (the key is released and a retry
 * runs again); other 4xx are kept, as Stripe does. Without the header nothing happens here: no statement.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  private readonly logger = new Logger('Idempotency');
  private readonly abandonedAfterSeconds: number;
  private readonly maxUploadBytes: number;
  private readonly fingerprintKey: Buffer;
  /** Kept bodies are sealed: an answer may carry a credential (a webhook's signing secret), kept for a day. */
  private readonly keptBodies: SealedText;
  /** Outside production a write the key cannot commit with fails the request; in production it is logged. */
  private readonly refuseStrayWrites: boolean;

  constructor(
    private readonly keys: IdempotencyKeysRepository,
    private readonly reflector: Reflector,
    @InjectConfig() config: AppConfig,
  ) {
    this.abandonedAfterSeconds = Math.ceil(config.http.requestTimeoutMs / 1000) + ABANDONED_MARGIN_SECONDS;
    this.maxUploadBytes = config.uploads.maxBytes;
    this.fingerprintKey = fingerprintKey(config.jwt.secret);
    this.keptBodies = new SealedText(config.jwt.secret, 'idempotency-key kept answer');
    this.refuseStrayWrites = config.nodeEnv !== 'production';
  }

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const request = context.switchToHttp().getRequest<Request>();
    const key = request.headers[IDEMPOTENCY_KEY_HEADER];
    const user = request.user as AuthUser | undefined;
    if (key === undefined || !user || !WRITE_METHODS.has(request.method)) return next.handle();
    if (Array.isArray(key) || !KEY_FORMAT.test(key)) {
      throw AppError.validation('Idempotency-Key must be 1 to 255 visible ASCII characters');
    }
    const response = context.switchToHttp().getResponse<Response>();
    // An upload's parts are read by the route's multer after this: its fingerprint is taken from what multer
    // read and stored with the answer.
    const multipart = Boolean(request.is('multipart/form-data'));
    const claim: KeyClaim = {
      userId: user.id,
      key,
      method: request.method,
      path: request.originalUrl,
      fingerprint: multipart ? null : jsonFingerprint(this.fingerprintKey, request.body),
    };
    // A second round when the holder released the key between our claim and our read.
    for (let round = 0; round < 2; round += 1) {
      const claimedAt = await this.keys.claim(
        claim,
        IDEMPOTENCY_RETENTION_SECONDS,
        this.abandonedAfterSeconds,
      );
      if (claimedAt) {
        const withheld = this.reflector.get<string>(ANSWER_WITHHELD, context.getHandler()) !== undefined;
        const held: HeldClaim = { ...claim, claimedAt, multipart, withheld };
        // The key's own statements are no write of the request.
        observeAnswer(response, (answer) => outsideKeyedWork(() => this.settle(request, held, answer)));
        return withStepBeforeEachCommit(
          (tx) => this.commitWith(tx, claim, claimedAt),
          (statement) => this.strayWrite(request, statement),
          () => next.handle(),
        );
      }
      const kept = await this.keys.find(user.id, key, this.abandonedAfterSeconds);
      if (kept) return this.answerRepeat(request, claim, kept, multipart);
    }
    throw inFlight();
  }

  private async answerRepeat(
    request: Request,
    claim: KeyClaim,
    kept: KeptKey,
    multipart: boolean,
  ): Promise<Observable<WholeAnswer>> {
    if (kept.requestMethod !== claim.method || kept.requestPath !== claim.path) throw reused();
    if (kept.responseStatus === null) {
      // Whether a repeated upload is the same is known only after reading it: in flight, it is a 409 either way.
      if (!multipart && kept.requestFingerprint !== claim.fingerprint) throw reused();
      // Its instance stopped between the commit and keeping the answer: the write stands, its answer is lost.
      if (kept.writeCommitted && kept.abandoned) throw answerNotKept();
      throw inFlight();
    }
    const fingerprint = multipart
      ? await readMultipartFingerprint(this.fingerprintKey, request, this.maxUploadBytes)
      : claim.fingerprint;
    if (fingerprint !== kept.requestFingerprint) throw reused();
    if (kept.responseWithheld) throw answerNotKept();
    const body =
      kept.responseBody === null ? null : this.keptBodies.open(kept.responseBody, bodyContext(claim));
    // Sealed under another JWT secret: the answer cannot be read back.
    if (kept.responseBody !== null && body === null) throw answerNotKept();
    // The first answer whole, its status included (the route's own status does not apply to a replay).
    return of(new WholeAnswer(kept.responseStatus, kept.responseContentType, body, REPLAYED_HEADERS));
  }

  /** A write of the keyed request outside the transaction that marks its key: a retry would run it again. */
  private strayWrite(request: Request, statement: string): void {
    const where = `${request.method} ${request.path}`;
    const message = `${where} writes outside Transactions.run with an Idempotency-Key; a retry would write again`;
    if (this.refuseStrayWrites) throw new Error(`${message}: ${statement.slice(0, 120)}`);
    this.logger.error({ statement: statement.slice(0, 120) }, message);
  }

  /** The last statement of each transaction of the keyed request; a claim taken over meanwhile rolls it back. */
  private async commitWith(tx: Tx, claim: KeyClaim, claimedAt: string): Promise<void> {
    if (!(await this.keys.commitWith(tx, claim.userId, claim.key, claimedAt))) throw inFlight();
  }

  /**
   * Keeps the answer before it is sent (the adapter sends it once this settles), whoever gives it: the
   * handler's value or the exception filter. A client that leaves changes nothing: the request runs on and its
   * answer is kept for the retry.
   */
  private async settle(
    request: Request,
    { claimedAt, multipart, withheld, ...claim }: HeldClaim,
    { status, contentType, body }: OutgoingAnswer,
  ): Promise<void> {
    try {
      // A refused upload was not read to its end: its fingerprint is unknown, so its key is not kept either.
      // A write that committed keeps its key whatever followed: the release is then refused and the answer kept.
      const failed = status >= 500 || status === 429 || (multipart && status >= 400);
      if (failed && (await this.keys.release(claim.userId, claim.key, claimedAt))) return;
      await this.keys.complete(claim.userId, claim.key, claimedAt, {
        status,
        contentType,
        body: withheld || body === null ? null : this.keptBodies.seal(body, bodyContext(claim)),
        withheld,
        fingerprint: multipart ? uploadFingerprint(this.fingerprintKey, request) : null,
      });
    } catch (error) {
      this.logger.error({ err: error }, 'Keeping the answer of an Idempotency-Key failed');
    }
  }
}

/** A claim this request holds, and how its answer is kept. */
interface HeldClaim extends KeyClaim {
  claimedAt: string;
  multipart: boolean;
  /** The route's answer carries credentials: only its status is kept. */
  withheld: boolean;
}

/** The fingerprint of an upload from what multer read: its text fields and stored files. */
function uploadFingerprint(key: Buffer, request: Request): string {
  const files = [
    ...(request.file ? [request.file] : []),
    ...(Array.isArray(request.files) ? request.files : Object.values(request.files ?? {}).flat()),
  ];
  const parts: FilePart[] = files.map((file) => ({
    field: file.fieldname,
    name: file.originalname,
    mimeType: file.mimetype,
    sha256: (file as Express.Multer.File & { sha256?: string }).sha256 ?? '',
  }));
  const fields = Object.entries((request.body ?? {}) as Record<string, unknown>).map(
    ([name, value]): [string, string] => [name, String(value)],
  );
  return multipartFingerprint(key, fields, parts);
}

const REPLAYED_HEADERS = { 'Idempotent-Replayed': 'true' };

/** What a kept body is sealed for: its key's row, so it opens nowhere else. */
const bodyContext = ({ userId, key }: Pick<KeyClaim, 'userId' | 'key'>): string => `${userId}\n${key}`;

const reused = (): AppError =>
  new AppError(ErrorCode.IDEMPOTENCY_KEY_REUSED, 'This Idempotency-Key was used for another request');

const inFlight = (): AppError =>
  AppError.conflict('A request with this Idempotency-Key is still in progress');

const answerNotKept = (): AppError =>
  new AppError(
    ErrorCode.IDEMPOTENCY_ANSWER_NOT_KEPT,
    'The request with this Idempotency-Key was carried out, but its answer is not kept: read the result instead',
  );
