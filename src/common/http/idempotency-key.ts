/**
 * The `Idempotency-Key` request header (Node lower-cases header names). Read by the idempotency interceptor and
 * by the upload engine, which hashes a file's bytes for the request fingerprint only when it is sent.
 */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
