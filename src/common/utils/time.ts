/** JSON timestamps are always `Date.toISOString()` output; null stays null. */
export function iso(value: Date | null | undefined): string | null {
  return value ? value.toISOString() : null;
}
