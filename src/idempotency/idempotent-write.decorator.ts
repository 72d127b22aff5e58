import { applyDecorators, SetMetadata, UseInterceptors } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';
import { ANSWER_WITHHELD, IdempotencyInterceptor } from './idempotency.interceptor';

/** The OpenAPI extension that says how a write route takes `Idempotency-Key` (read by the route test). */
export const IDEMPOTENCY_EXTENSION = 'x-idempotency-key';

/**
 * The route takes `Idempotency-Key`: `IdempotencyInterceptor` runs around it. Put it last,
 * right above the handler, so it runs before the route's other interceptors (an upload's multer reads the
 * body inside it). `answerWithheldBecause`: the answer carries credentials (tokens, secret addresses,
 * tickets), so only its status is kept and a repeat answers 409 IDEMPOTENCY_ANSWER_NOT_KEPT; say why.
 */
export const IdempotentWrite = ({ answerWithheldBecause }: { answerWithheldBecause?: string } = {}) =>
  applyDecorators(
    ...(answerWithheldBecause ? [SetMetadata(ANSWER_WITHHELD, answerWithheldBecause)] : []),
    ApiExtension(
      IDEMPOTENCY_EXTENSION,
      answerWithheldBecause ? { answer: 'withheld', because: answerWithheldBecause } : { answer: 'kept' },
    ),
    UseInterceptors(IdempotencyInterceptor),
  );

/** An authenticated write that takes no `Idempotency-Key`, and why (the route test asks every write for one). */
export const WithoutIdempotencyKey = (because: string) =>
  ApiExtension(IDEMPOTENCY_EXTENSION, { answer: 'none', because });
