'use strict';
const { createHmac, randomBytes } = require('node:crypto');

/** The JWT secret of the servers a bench starts (one per bench process). */
const JWT_SECRET = randomBytes(32).toString('hex');

/** A login token as the service issues it (src/auth/jwt.strategy.ts): HS256, `sub`, token version `ver`. */
function signToken(userId, tokenVersion = 0) {
  const encode = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const unsigned = `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode({ sub: userId, ver: tokenVersion, iat: now, exp: now + 3600 })}`;
  return `${unsigned}.${createHmac('sha256', JWT_SECRET).update(unsigned).digest('base64url')}`;
}

const bearer = (userId, tokenVersion) => `Bearer ${signToken(userId, tokenVersion)}`;

module.exports = { JWT_SECRET, signToken, bearer };
