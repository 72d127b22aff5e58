/** What Express adds to a request once a route takes it (its public `baseUrl` and `route`). */
interface RoutedRequest {
  baseUrl?: string;
  route?: { path?: unknown };
}

/**
 * The route template that took the request, as Nest registered it with Express (`/classes/:classId`), or
 * null when none did (404s, refused bodies): never the URL itself, which holds ids and tokens.
 */
export function routeTemplate(request: object): string | null {
  const { baseUrl, route } = request as RoutedRequest;
  return typeof route?.path === 'string' ? (baseUrl ?? '') + route.path : null;
}
