import { StreamableFile } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Response } from 'express';
import { tagAnswer } from './entity-tags';

/**
 * An answer given whole, status included: what a handler's value is mapped to when the answer is not the
 * route's own (a replay of a kept answer). The route's status does not apply to it.
 */
export class WholeAnswer {
  constructor(
    readonly status: number,
    readonly contentType: string | null,
    readonly body: string | null,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {}
}

/** An answer about to be sent, as its observer sees it. */
export interface OutgoingAnswer {
  status: number;
  contentType: string | null;
  /** The body text; null without one. */
  body: string | null;
}

/** Called with the answer before it is sent; the answer waits for it. It must not throw. */
export type AnswerObserver = (answer: OutgoingAnswer) => Promise<void>;

const OBSERVER = 'answerObserver';

/**
 * Has `observer` see the answer to `response` before it is sent, whoever gives it (the handler's value,
 * the exception filter): the answer is sent once the observer's promise settles.
 */
export function observeAnswer(response: Response, observer: AnswerObserver): void {
  response.locals[OBSERVER] = observer;
}

/**
 * The Express adapter through which every answer of a route or of the exception filter is sent (Nest calls
 * `reply` with the handler's value and the route's status; the filter calls it with the error's). It
 * serialises a JSON answer once, for its `ETag` (`tagAnswer`) and its body; answers a `WholeAnswer` with its
 * own status; and lets the request's `observeAnswer` observer see the answer before sending it.
 */
export class AnswerAdapter extends ExpressAdapter {
  override reply(response: Response, body: unknown, statusCode?: number): unknown {
    if (body instanceof StreamableFile) return super.reply(response, body, statusCode);
    let text: string | undefined;
    if (body instanceof WholeAnswer) {
      response.status(body.status);
      for (const [name, value] of Object.entries(body.headers)) response.setHeader(name, value);
      if (body.contentType) response.setHeader('Content-Type', body.contentType);
      text = body.body ?? undefined;
    } else {
      if (statusCode) response.status(statusCode);
      if (body === undefined || body === null) text = undefined;
      else if (typeof body === 'object') {
        text = JSON.stringify(body);
        if (response.getHeader('Content-Type') === undefined)
          response.setHeader('Content-Type', 'application/json; charset=utf-8');
      } else {
        // A number or a boolean is its JSON text, as String() would write it.
        text = typeof body === 'string' ? body : JSON.stringify(body);
        if (response.getHeader('Content-Type') === undefined)
          response.setHeader('Content-Type', 'text/html; charset=utf-8');
      }
    }
    tagAnswer(response.req, response, text);
    const observer = response.locals[OBSERVER] as AnswerObserver | undefined;
    if (!observer) return response.send(text);
    delete response.locals[OBSERVER];
    const contentType = response.getHeader('Content-Type');
    const answer: OutgoingAnswer = {
      status: response.statusCode,
      contentType: typeof contentType === 'string' ? contentType : null,
      body: text ?? null,
    };
    return observer(answer).finally(() => response.send(text));
  }
}
