'use strict';
const { join } = require('node:path');
const { request } = require('./http');

/** The preload script that `startServer({ withProbe: true })` loads into the server. */
const PRELOAD = join(__dirname, 'probe-preload.js');

/** Talks to the probe of a running server (see probe-preload.js). */
function client(port) {
  const call = async (method, path) => {
    const result = await request(port, path, { method, json: true });
    if (result.status !== 200) throw new Error(`probe ${method} ${path} answered ${result.status}`);
    return result.body;
  };
  return {
    /**
     * SQL statements per request while `work` runs (requests one after another). Answers
     * { requests, statements, perRequest, texts }.
     */
    async countStatements(work) {
      await call('POST', '/count/start');
      const outcome = await work().then(
        () => null,
        (error) => error,
      );
      const result = await call('POST', '/count/stop');
      if (outcome) throw outcome;
      return { ...result, perRequest: result.requests ? result.statements / result.requests : null };
    },
    resetDelay: () => call('POST', '/eld/reset'),
    startProfile: () => call('POST', '/profile/start'),
    stopProfile: () => call('POST', '/profile/stop'),
    delay: () => call('GET', '/eld'),
  };
}

module.exports = { PRELOAD, client };
