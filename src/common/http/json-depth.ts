import type { NextFunction, Request, Response } from 'express';
import { AppError } from '../errors/app-error';

/** No request body of the API nests deeper than a few levels; this leaves room and stops abuse. */
export const JSON_MAX_DEPTH = 32;

/** Whether objects and arrays in `value` nest deeper than `limit` levels (iterative: any depth is safe). */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [current, depth] = next;
    if (current === null || typeof current !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Object.values(current)) pending.push([child, depth + 1]);
  }
  return false;
}

/**
 * Refuses JSON bodies nested deeper than JSON_MAX_DEPTH with 400. The validation pipe and class-transformer walk
 * a body recursively, so a small body of a few thousand nested brackets exhausted the stack: 500 instead of 400.
 */
export function rejectDeepJson(request: Request, _response: Response, next: NextFunction): void {
  next(
    nestsDeeperThan(request.body, JSON_MAX_DEPTH)
      ? AppError.validation(`JSON body nested deeper than ${JSON_MAX_DEPTH} levels`)
      : undefined,
  );
}
