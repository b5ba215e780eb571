/**
 * A text of at most `max` characters. A cut one is copied out: V8 keeps a slice as a view of the
 * whole string, so a kept 200-character name would hold a site's 1 MB one alive.
 */
export function cutText(text: string, max: number): string {
  return text.length <= max ? text : Buffer.from(text.slice(0, max), "utf16le").toString("utf16le");
}
