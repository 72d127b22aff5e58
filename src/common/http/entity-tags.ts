import { applyDecorators, createParamDecorator, ExecutionContext } from '@nestjs/common';
import { ApiHeader, ApiResponse } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { createHash } from 'node:crypto';
import { AppError, ErrorCode } from '../errors/app-error';

/**
 * Entity tags (`ETag`, `If-None-Match`, `If-Match`). A tag is the SHA-256 of the JSON answer itself: the answers carry per-caller
 * fields (`myRole`, `userState`, `stats`...), so a tag names exactly what this caller was sent, and the tag
 * `If-Match` accepts is the one the GET gave (the representation the caller would get now, computed in the
 * write's transaction with the row locked; see docs/decisions.md).
 */
export const entityTagOfJson = (json: string): string =>
  `"${createHash('sha256').update(json).digest('base64url')}"`;

export const entityTagOf = (body: unknown): string => entityTagOfJson(JSON.stringify(body));

/**
 * Documents, in OpenAPI only, a GET whose answer `tagAnswer` tags (as every successful JSON answer) and
 * answers 304 to a current `If-None-Match`; the tagging and the 304 happen there, for every route alike.
 */
export const ApiNotModifiedResponse = (): MethodDecorator =>
  applyDecorators(
    ApiHeader({
      name: 'If-None-Match',
      required: false,
      description: 'ETag of a representation the client holds: 304 while it is current',
    }),
    ApiResponse({ status: 304, description: 'Not Modified: the If-None-Match tag is current; no body' }),
  );

/**
 * The one place that tags answers and decides 304s, called by `AnswerAdapter` with each answer it is about to
 * send (`text`: its body; undefined without one). A successful JSON answer is tagged from the text that is
 * sent, so a 304 costs one hash beyond the read; an answer that sets its own `ETag` (the calendar feed) keeps
 * it. A GET or HEAD whose `If-None-Match` names the answer's tag is answered 304 without a body, whatever its
 * `Cache-Control` or `Pragma` say: browsers and Node's `fetch` add `no-cache` to every request that carries
 * `If-None-Match`, and Express's own check (`req.fresh`) then never answers 304. Error answers carry no tag.
 */
export function tagAnswer(request: Request, response: Response, text: string | undefined): void {
  if (response.statusCode >= 300) return;
  if (text !== undefined && response.getHeader('ETag') === undefined && isJson(response)) {
    response.setHeader('ETag', entityTagOfJson(text));
  }
  const tag = response.getHeader('ETag');
  // Express drops the body and its headers of a 304.
  if (typeof tag === 'string' && isNotModified(request, tag)) response.status(304);
}

const isJson = (response: Response): boolean =>
  /^application\/json\b/.test(String(response.getHeader('Content-Type') ?? ''));

/**
 * RFC 9110 If-None-Match for a GET or HEAD: true when the header is `*` or lists `tag` (weak comparison, so
 * `W/` on either side matches).
 */
function isNotModified(request: Request, tag: string): boolean {
  const header = request.headers['if-none-match'];
  if (header === undefined || (request.method !== 'GET' && request.method !== 'HEAD')) return false;
  if (header.trim() === '*') return true;
  const opaque = weakless(tag);
  return (header.match(ENTITY_TAG) ?? []).some((listed) => weakless(listed) === opaque);
}

const weakless = (tag: string): string => (tag.startsWith('W/') ? tag.slice(2) : tag);

/** The entity tags of `If-Match` (`*` included as itself), or undefined when the header is absent. */
export type IfMatchTags = readonly string[] | undefined;

const ENTITY_TAG = /(?:W\/)?"[\x21\x23-\x7e\x80-\xff]*"/g;

/** `If-Match` of the request: `["*"]`, the listed tags (weak ones keep their `W/`), or undefined. */
export const IfMatch = createParamDecorator((_data: unknown, context: ExecutionContext): IfMatchTags => {
  const header = context.switchToHttp().getRequest<Request>().headers['if-match'];
  if (header === undefined) return undefined;
  return header.trim() === '*' ? ['*'] : (header.match(ENTITY_TAG) ?? []);
});

/** Documents `If-Match` and its 412 on a route that takes `@IfMatch()`. */
export const IfMatchRoute = (): MethodDecorator =>
  applyDecorators(
    ApiHeader({
      name: 'If-Match',
      required: false,
      description: 'ETag from the GET (or `*`): the write happens only while it is current',
    }),
    ApiResponse({
      status: 412,
      description: 'PRECONDITION_FAILED: the If-Match tag is not current; nothing changed',
    }),
  );

/**
 * RFC 9110 If-Match with the strong comparison: passes when no tags were sent, or when `current` (the answer
 * the caller's GET would give now; null when there is none) exists and `*` or its tag is listed. Call it in
 * the write's transaction after locking the row, so the check and the write see the same version.
 */
export function assertIfMatch(tags: IfMatchTags, current: unknown): void {
  if (tags === undefined) return;
  if (current !== null && (tags.includes('*') || tags.includes(entityTagOf(current)))) return;
  throw new AppError(ErrorCode.PRECONDITION_FAILED, 'The resource changed since the If-Match tag was issued');
}
