/**
 * Site registry CLI: `npm run sites -- add --name <n> --url <u> | list | update <id> [--name <n>]
 * [--url <u>] | remove <id> | probe <id>`. `probe` asks the site's `/api/status` now and stores its
 * family, version and money settings (otherwise refreshed when older than an hour). Each answer is one line of JSON on stdout; errors go to stderr with
 * a non-zero exit (2 for a malformed command, 1 otherwise).
 */
import { parseArgs } from "node:util";
import { closeDb, db } from "../src/server/db/client";
import { EnvError, env } from "../src/server/core/env";
import { probeSite } from "../src/server/sites/probe";
import { SiteError, parseSiteId, siteRegistry } from "../src/server/sites/registry";
import { prepare } from "./prepare";

const USAGE = `用法:
  npm run sites -- add --name <名称> --url <地址>
  npm run sites -- list
  npm run sites -- update <id> [--name <名称>] [--url <地址>]
  npm run sites -- remove <id>
  npm run sites -- probe <id>`;

class UsageError extends Error {}

function siteIdArg(raw: string | undefined): number {
  const id = parseSiteId(raw);
  if (id === null) throw new UsageError(`站点 id 必须是正整数: ${raw ?? "(缺少)"}`);
  return id;
}

async function run(argv: string[]): Promise<unknown> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { name: { type: "string" }, url: { type: "string" }, help: { type: "boolean", short: "h" } },
    allowPositionals: true,
    strict: true,
  });
  const [command, ...rest] = positionals;
  if (values.help || command === undefined) throw new UsageError("");
  const sites = siteRegistry(db());
  switch (command) {
    case "add":
      if (rest.length > 0) throw new UsageError(`多余的参数: ${rest.join(" ")}`);
      if (values.name === undefined || values.url === undefined) {
        throw new UsageError("add 需要 --name 和 --url");
      }
      return sites.add({ name: values.name, url: values.url });
    case "list":
      if (rest.length > 0) throw new UsageError(`多余的参数: ${rest.join(" ")}`);
      return sites.list();
    case "update": {
      if (rest.length !== 1) throw new UsageError("update 需要一个站点 id");
      if (values.name === undefined && values.url === undefined) {
        throw new UsageError("update 至少需要 --name 或 --url 之一");
      }
      return sites.update(siteIdArg(rest[0]), { name: values.name, url: values.url });
    }
    case "remove":
      if (rest.length !== 1) throw new UsageError("remove 需要一个站点 id");
      return sites.remove(siteIdArg(rest[0]));
    case "probe":
      if (rest.length !== 1) throw new UsageError("probe 需要一个站点 id");
      return probeSite(db(), siteIdArg(rest[0]), {
        timeoutMs: env().SITE_TIMEOUT_MS,
        perMinute: env().SITE_REQUESTS_PER_MINUTE,
      });
    default:
      throw new UsageError(`未知命令: ${command}`);
  }
}

async function main(): Promise<number> {
  try {
    await prepare();
    const result = await run(process.argv.slice(2));
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      const message = (error as Error).message;
      process.stderr.write(`${message ? `错误: ${message}\n` : ""}${USAGE}\n`);
      return 2;
    }
    if (error instanceof SiteError || error instanceof EnvError) {
      process.stderr.write(`错误: ${error.message}\n`);
      return 1;
    }
    process.stderr.write(`错误: ${(error as Error).message}\n`);
    return 1;
  } finally {
    await closeDb(db()).catch(() => undefined);
  }
}

process.exitCode = await main();
