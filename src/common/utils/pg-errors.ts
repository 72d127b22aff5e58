import { QueryFailedError } from 'typeorm';

/** PostgreSQL SQLSTATE of a failed query, e.g. 23505 unique_violation. */
export function pgErrorCode(error: unknown): string | undefined {
  if (error instanceof QueryFailedError) return (error.driverError as { code?: string }).code;
  return (error as { code?: string } | null)?.code;
}

export function pgConstraint(error: unknown): string | undefined {
  if (error instanceof QueryFailedError) return (error.driverError as { constraint?: string }).constraint;
  return (error as { constraint?: string } | null)?.constraint;
}

export const isUniqueViolation = (error: unknown): boolean => pgErrorCode(error) === '23505';
