import { Injectable, RequestMethod } from '@nestjs/common';
import { INTERCEPTORS_METADATA, METHOD_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import { IdempotencyInterceptor } from './idempotency.interceptor';

const WRITE_METHODS = new Set([RequestMethod.POST, RequestMethod.PUT, RequestMethod.PATCH]);

/**
 * Puts the IdempotencyInterceptor first on every POST, PUT and PATCH handler of every controller, as if each
 * said `@UseInterceptors(IdempotencyInterceptor)`. Not a global interceptor: on Node 20 every interceptor
 * layer costs each request two deprecation wrappers in `AsyncResource.bind` (about 100 µs of CPU), which the
 * reads, the hot paths, should not pay for a header only writes take. It runs when Nest builds the providers,
 * before the router reads the handlers' interceptors (`app.init()`); the instance is the injected one.
 */
@Injectable()
export class IdempotentWriteRoutes {
  constructor(modules: ModulesContainer, interceptor: IdempotencyInterceptor) {
    for (const module of modules.values()) {
      for (const { metatype } of module.controllers.values()) {
        if (typeof metatype !== 'function') continue;
        const prototype = metatype.prototype as Record<string, unknown>;
        for (const name of Object.getOwnPropertyNames(prototype)) {
          const handler = prototype[name];
          if (
            typeof handler !== 'function' ||
            !WRITE_METHODS.has(Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod)
          ) {
            continue;
          }
          // Another app of this process (tests run several) left its own instance here: each app's router read
          // the list when it started, so this app's replaces it.
          const own = ((Reflect.getMetadata(INTERCEPTORS_METADATA, handler) ?? []) as unknown[]).filter(
            (entry) => !(entry instanceof IdempotencyInterceptor),
          );
          Reflect.defineMetadata(INTERCEPTORS_METADATA, [interceptor, ...own], handler);
        }
      }
    }
  }
}
