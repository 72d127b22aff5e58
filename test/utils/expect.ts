/** Matchers for the shapes every API answer shares (error bodies, timestamps, ids). */

export const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The exact error body of the API. */
export const apiError = (code: string) => ({ error: expect.any(String), code });
