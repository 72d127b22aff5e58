import { ArgumentMetadata, ValidationError, ValidationPipe } from '@nestjs/common';
import { AppError } from './app-error';

function flatten(errors: ValidationError[], parent = ''): string[] {
  return errors.flatMap((error) => {
    const path = parent ? `${parent}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) =>
      message.startsWith(error.property) ? message.replace(error.property, path) : `${path}: ${message}`,
    );
    return [...own, ...flatten(error.children ?? [], path)];
  });
}

/**
 * Names of Object.prototype members (`constructor`, `toString`, `__proto__`, ...) and `prototype`: no DTO
 * declares them, and class-transformer skips them, so the whitelist alone does not see them as unknown
 * fields.
 */
const PROTOTYPE_KEYS = new Set([...Object.getOwnPropertyNames(Object.prototype), 'prototype']);

class StrictValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const fields = metadata.type === 'body' || metadata.type === 'query';
    if (fields && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      const key = Object.keys(value).find((name) => PROTOTYPE_KEYS.has(name));
      if (key !== undefined) throw AppError.validation(`${key}: property ${key} should not exist`);
    }
    return super.transform(value, metadata);
  }
}

/** Strict body/query validation: unknown fields are rejected, values are converted to the DTO types. */
export function createValidationPipe(): ValidationPipe {
  return new StrictValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    stopAtFirstError: true,
    exceptionFactory: (errors) => AppError.validation(flatten(errors).join('; ') || 'Invalid request'),
  });
}
