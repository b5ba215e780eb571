/**
 * The WebDAV folder the All API Hub extension syncs with (docs/design.md 26), at `/dav/`: the
 * methods its client sends (PROPFIND, MKCOL, GET, PUT, MOVE, DELETE), HTTP Basic with the
 * workspace's sync credential as the password (any user name), the collection
 * `all-api-hub-backup` and its file `all-api-hub-1-0.json`, the extension's temporary copies
 * beside it. Translation only: each method calls its `dav.*` procedure.
 */
import { TRPCError } from "@trpc/server";
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import { createRequestContext } from "../api/context";
import { createCaller } from "../api/root";
import { logError } from "../core/log";
import { BodiesBusy, BodyTooLarge, IMPORT_MAX_BYTES, readRequestBody } from "../net/body";
import { MSG } from "../core/messages";

const DAV_ROOT = "/dav";
const COLLECTION = "all-api-hub-backup";
const FILE = "all-api-hub-1-0.json";
const ALLOW = "OPTIONS, PROPFIND, MKCOL, GET, HEAD, PUT, MOVE, DELETE";

/** Whether a request's path is the WebDAV folder's. */
export const isDavPath = (pathname: string) => pathname === DAV_ROOT || pathname.startsWith(`${DAV_ROOT}/`);

/** Where a path points: the root, the collection, the extension's file, another file in the collection. */
type Target = { kind: "root" } | { kind: "collection" } | { kind: "file" } | { kind: "other"; name: string } | null;

function targetOf(pathname: string): Target {
  let parts: string[];
  try {
    parts = pathname
      .slice(DAV_ROOT.length)
      .split("/")
      .filter(Boolean)
      .map((p) => decodeURIComponent(p));
  } catch {
    return null;
  }
  if (parts.length === 0) return { kind: "root" };
  if (parts[0] !== COLLECTION) return null;
  if (parts.length === 1) return { kind: "collection" };
  if (parts.length !== 2) return null;
  const name = parts[1] as string;
  if (name === FILE) return { kind: "file" };
  return name.length <= 200 && !/[\\\0]/.test(name) ? { kind: "other", name } : null;
}

const text = (status: number, body: string, headers: Record<string, string> = {}) =>
  new Response(body, { status, headers: { "Content-Type": "text/plain; charset=utf-8", ...headers } });

/** The sync credential of HTTP Basic (the password; the user name is not looked at), as a Bearer. */
function bearerOf(req: Request): string | null {
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(req.headers.get("authorization") ?? "");
  if (!basic) return null;
  const decoded = Buffer.from(basic[1] as string, "base64").toString("latin1");
  const colon = decoded.indexOf(":");
  return colon < 0 ? null : decoded.slice(colon + 1);
}

const unauthorized = () =>
  text(401, "需要工作区的同步凭据：用户名任意，密码填写同步凭据", {
    "WWW-Authenticate": 'Basic realm="All API Hub sync", charset="UTF-8"',
  });

type Entry = { href: string; collection: boolean; size?: number; modified?: Date };

function multistatus(entries: Entry[]): Response {
  const escape = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const body = entries
    .map(
      (e) =>
        `<d:response><d:href>${escape(e.href)}</d:href><d:propstat><d:prop>` +
        (e.collection
          ? "<d:resourcetype><d:collection/></d:resourcetype>"
          : `<d:resourcetype/><d:getcontenttype>application/json</d:getcontenttype>` +
            (e.size === undefined ? "" : `<d:getcontentlength>${e.size}</d:getcontentlength>`)) +
        (e.modified ? `<d:getlastmodified>${e.modified.toUTCString()}</d:getlastmodified>` : "") +
        `</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>`,
    )
    .join("");
  return new Response(`<?xml version="1.0" encoding="utf-8"?>\n<d:multistatus xmlns:d="DAV:">${body}</d:multistatus>`, {
    status: 207,
    headers: { "Content-Type": "application/xml; charset=utf-8" },
  });
}

const fileHref = (name: string) => `${DAV_ROOT}/${COLLECTION}/${encodeURIComponent(name)}`;

type Caller = ReturnType<typeof createCaller>;

async function propfind(caller: Caller, target: NonNullable<Target>, depth: string): Promise<Response> {
  const deep = depth !== "0";
  const root: Entry = { href: `${DAV_ROOT}/`, collection: true };
  const collection: Entry = { href: `${DAV_ROOT}/${COLLECTION}`, collection: true };
  if (target.kind === "root") return multistatus(deep ? [root, collection] : [root]);
  const listing = await caller.dav.listing();
  const file: Entry[] = listing.fileAt ? [{ href: fileHref(FILE), collection: false, modified: listing.fileAt }] : [];
  const others: Entry[] = listing.files.map((f) => ({
    href: fileHref(f.name),
    collection: false,
    size: f.size,
    modified: f.createdAt,
  }));
  if (target.kind === "collection") return multistatus(deep ? [collection, ...file, ...others] : [collection]);
  if (target.kind === "file") {
    // The file exists whenever a read would give one.
    if (file.length > 0) return multistatus(file);
    return (await caller.dav.file()).text === null
      ? text(404, "文件不存在")
      : multistatus([{ href: fileHref(FILE), collection: false }]);
  }
  const found = others.find((o) => o.href === fileHref(target.name));
  return found ? multistatus([found]) : text(404, "文件不存在");
}

async function write(caller: Caller, input: { body: Buffer } | { from: string }): Promise<Response> {
  const result = await caller.dav.write(input);
  if (!result.ok) return text(result.busy ? 423 : 422, result.message);
  return new Response(null, { status: result.created ? 201 : 204 });
}

/** The destination of a MOVE, inside this folder; null when it is elsewhere. */
function destinationOf(req: Request): Target {
  const raw = req.headers.get("destination");
  if (!raw) return null;
  try {
    const url = new URL(raw, req.url);
    return url.host === new URL(req.url).host && isDavPath(url.pathname) ? targetOf(url.pathname) : null;
  } catch {
    return null;
  }
}

async function handle(req: Request, caller: Caller, target: NonNullable<Target>): Promise<Response> {
  const method = req.method.toUpperCase();
  const isFolder = target.kind === "root" || target.kind === "collection";
  switch (method) {
    case "PROPFIND":
      return propfind(caller, target, req.headers.get("depth") ?? "1");
    case "MKCOL":
      return isFolder ? text(405, "文件夹已存在", { Allow: ALLOW }) : text(403, "只能使用 all-api-hub-backup 文件夹");
    case "GET":
    case "HEAD": {
      if (isFolder) return text(200, "All API Hub 同步文件夹：请在扩展的 WebDAV 设置中填写此地址");
      const body =
        target.kind === "file"
          ? ((await caller.dav.file()).text ?? null)
          : (await caller.dav.temp({ name: target.name })).body;
      if (body === null) return text(404, "文件不存在");
      return new Response(method === "HEAD" ? null : (body as BodyInit), {
        status: 200,
        headers: { "Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store" },
      });
    }
    case "PUT": {
      if (isFolder) return text(405, "不能写入文件夹", { Allow: ALLOW });
      const body = await readRequestBody(req, IMPORT_MAX_BYTES);
      if (target.kind === "file") return write(caller, { body });
      const put = await caller.dav.putTemp({ name: target.name, body });
      if (!put.stored) return text(507, "同步文件夹中的临时文件过多，请稍后再试");
      return new Response(null, { status: put.created ? 201 : 204 });
    }
    case "DELETE": {
      if (isFolder) return text(403, "不能删除同步文件夹");
      if (target.kind === "file") {
        await caller.dav.clear();
        return new Response(null, { status: 204 });
      }
      const { removed } = await caller.dav.removeTemp({ name: target.name });
      return removed ? new Response(null, { status: 204 }) : text(404, "文件不存在");
    }
    case "MOVE": {
      const to = destinationOf(req);
      if (target.kind !== "other" || to === null || to.kind === "root" || to.kind === "collection")
        return text(403, "只能把临时文件移动为同步文件");
      const { body } = await caller.dav.temp({ name: target.name });
      if (body === null) return text(404, "文件不存在");
      if (to.kind === "file") {
        if (req.headers.get("overwrite")?.toUpperCase() === "F" && (await caller.dav.listing()).fileAt !== null)
          return text(412, "目标文件已存在");
        return write(caller, { from: target.name });
      }
      const put = await caller.dav.putTemp({ name: to.name, body });
      if (!put.stored) return text(507, "同步文件夹中的临时文件过多，请稍后再试");
      await caller.dav.removeTemp({ name: target.name });
      return new Response(null, { status: put.created ? 201 : 204 });
    }
    default:
      return text(405, "不支持的方法", { Allow: ALLOW });
  }
}

/** Answers one WebDAV request. */
export async function davHandler(req: Request): Promise<Response> {
  const url = new URL(req.url);
  if (req.method.toUpperCase() === "OPTIONS")
    return new Response(null, { status: 200, headers: { DAV: "1", Allow: ALLOW } });
  const token = bearerOf(req);
  if (token === null) return unauthorized();
  const target = targetOf(url.pathname);
  const headers = new Headers(req.headers);
  headers.set("authorization", `Bearer ${token}`);
  const resHeaders = new Headers();
  const caller = createCaller(createRequestContext(new Request(req.url, { headers }), resHeaders));
  try {
    // The credential first: a wrong one learns nothing of the folder.
    await caller.dav.listing();
    if (target === null) return text(404, "不存在：同步文件在 all-api-hub-backup/all-api-hub-1-0.json");
    return await handle(req, caller, target);
  } catch (error) {
    if (error instanceof BodyTooLarge) return text(413, "文件过大（最多 4 MiB）");
    if (error instanceof BodiesBusy) return text(503, MSG.bodiesBusy, { "Retry-After": "5" });
    if (error instanceof TRPCError && error.code === "UNAUTHORIZED") return unauthorized();
    if (error instanceof TRPCError && error.code !== "INTERNAL_SERVER_ERROR") {
      const wait = resHeaders.get("retry-after");
      return text(getHTTPStatusCodeFromError(error), error.message, wait ? { "Retry-After": wait } : {});
    }
    logError("dav", error instanceof TRPCError ? (error.cause ?? error) : error);
    return text(500, "服务内部错误");
  }
}
