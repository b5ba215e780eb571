/** Request bodies over this are refused (HTTP 413) by every route. */
const MAX_BODY_BYTES = 64 * 1024;

export class BodyTooLarge extends Error {}

/**
 * Reads a request's or response's body, refusing more than `max` bytes whether or not
 * Content-Length says so; `tooLarge` makes the error thrown then.
 */
export async function readCapped(
  message: { headers: Headers; body: ReadableStream<Uint8Array> | null },
  max: number,
  tooLarge: () => Error,
): Promise<Buffer> {
  if (Number(message.headers.get("content-length") ?? "0") > max) throw tooLarge();
  if (!message.body) return Buffer.alloc(0);
  const reader = message.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** What a backup file being imported into a workspace may weigh (the one route with more than 64 KiB). */
export const IMPORT_MAX_BYTES = 4 * 1024 * 1024;

/** A request's body within `max` (MAX_BODY_BYTES unless the route says more); throws BodyTooLarge past it. */
export function readRequestBody(req: Request, max = MAX_BODY_BYTES): Promise<Buffer> {
  if (max > MAX_BODY_BYTES) return readLargeBody(req, max);
  return readCapped(req, max, () => new BodyTooLarge());
}

/** More bodies past MAX_BODY_BYTES being read at once than the process reads side by side. */
export class BodiesBusy extends Error {}

/** Bodies past MAX_BODY_BYTES (files: an import, a restore, a WebDAV write) read at once in the process. */
const LARGE_READS_MAX = 4;
let largeReads = 0;

/**
 * A body of up to `max` bytes, one of at most LARGE_READS_MAX read at once (BodiesBusy past them:
 * a flood of files waits at the door, not in the memory and the event loop beside everyone else's
 * requests); one whose Content-Length is past `max` is refused before it is read.
 */
async function readLargeBody(req: Request, max: number): Promise<Buffer> {
  if (Number(req.headers.get("content-length") ?? "0") > max) throw new BodyTooLarge();
  if (largeReads >= LARGE_READS_MAX) throw new BodiesBusy();
  largeReads++;
  try {
    return await readCapped(req, max, () => new BodyTooLarge());
  } finally {
    largeReads--;
  }
}
