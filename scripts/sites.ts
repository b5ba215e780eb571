/**
 * Site registry CLI: `npm run sites -- add --name <n> --url <u> | list | update <id> [--name <n>]
 * [--url <u>] | remove <id> | probe <id>`. `probe` asks the site's `/api/status` now and stores its
 * family, version and money settings (otherwise refreshed when older than an hour). Each answer is one line of JSON on stdout; errors go to stderr with
 * a non-zero exit (2 for a malformed command, 1 otherwise). `admin-password` reads the operator's
 * new password from standard input (asked twice, unseen, on a terminal) and stores its scrypt hash;
 * every operator session ends. `signup open|invite` sets who may create a workspace, `invite
 * [--note <n>]` makes a one-time invite code (shown once), `vault-reseal` seals every saved access
 * token again under the vault's newest key (run after adding a key, before removing the old one).
 */
import { userInfo } from "node:os";
import { createInterface } from "node:readline";
import { Writable } from "node:stream";
import { parseArgs } from "node:util";
import { OperatorError, setOperatorPassword } from "../src/server/admin/operator";
import { addSite, editSite, removeSite } from "../src/server/admin/sites";
import { siteLedger } from "../src/server/ledger/sites";
import { closeDb, db } from "../src/server/db/client";
import { StoreRefused } from "../src/server/db/sqlite-guard";
import { EnvError, env } from "../src/server/core/env";
import { probeSite } from "../src/server/sites/probe";
import { SiteError, parseSiteId, siteRegistry } from "../src/server/sites/registry";
import { resealSavedTokens } from "../src/server/workspace/reseal";
import { resealAlertChannels } from "../src/server/alerts/channels";
import { resealHubSync } from "../src/server/hub/store";
import { signup } from "../src/server/workspace/signup";
import { prepare } from "./prepare";

const USAGE = `用法:
  npm run sites -- add --name <名称> --url <地址>
  npm run sites -- list
  npm run sites -- update <id> [--name <名称>] [--url <地址> [--same-gateway]]
  npm run sites -- remove <id>
  npm run sites -- probe <id>
  npm run sites -- admin-password        （从标准输入读取新的管理员密码）
  npm run sites -- signup open|invite    （任何人可创建工作区 / 仅凭邀请码）
  npm run sites -- invite [--note <备注>]  （生成一次性邀请码，只显示这一次）
  npm run sites -- vault-reseal          （用最新的密钥重新密封保存的访问令牌）`;

class UsageError extends Error {}

/** One line typed at a terminal without showing it. */
function askHidden(question: string): Promise<string> {
  return new Promise((resolve) => {
    const muted = new Writable({ write: (_chunk, _encoding, done) => done() });
    process.stderr.write(question);
    const rl = createInterface({ input: process.stdin, output: muted, terminal: true });
    rl.once("line", (line) => {
      rl.close();
      process.stderr.write("\n");
      resolve(line);
    });
  });
}

/** The new password: from a terminal typed twice and compared, else the first line of stdin. */
async function readNewPassword(): Promise<string> {
  if (process.stdin.isTTY) {
    const first = await askHidden("新的管理员密码: ");
    const second = await askHidden("再输入一次: ");
    if (first !== second) throw new OperatorError("两次输入的密码不一致", "invalid");
    return first;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8").split(/\r?\n/)[0] ?? "";
}

/** Who the audit log names for a change made here: the command line and the host user. */
function actor(): string {
  let user = process.env.USER ?? "";
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry for this uid: the environment's name, if any.
  }
  return `命令行（${user || "未知用户"}）`;
}

function siteIdArg(raw: string | undefined): number {
  const id = parseSiteId(raw);
  if (id === null) throw new UsageError(`站点 id 必须是正整数: ${raw ?? "(缺少)"}`);
  return id;
}

async function run(argv: string[]): Promise<unknown> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      name: { type: "string" },
      url: { type: "string" },
      note: { type: "string" },
      "same-gateway": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
    allowPositionals: true,
    strict: true,
  });
  const [command, ...rest] = positionals;
  if (values.help || command === undefined) throw new UsageError("");
  const sites = siteRegistry(db());
  // Changes go through the same audited operations as the admin page, without probing first.
  const opts = {
    timeoutMs: env().SITE_TIMEOUT_MS,
    perMinute: env().SITE_REQUESTS_PER_MINUTE,
    probe: false,
    ledger: siteLedger(db()),
  };
  const plain = ({ site }: { site: { id: number; name: string; url: string } }) => ({
    id: site.id,
    name: site.name,
    url: site.url,
  });
  switch (command) {
    case "add":
      if (rest.length > 0) throw new UsageError(`多余的参数: ${rest.join(" ")}`);
      if (values.name === undefined || values.url === undefined) {
        throw new UsageError("add 需要 --name 和 --url");
      }
      return plain(await addSite(db(), { name: values.name, url: values.url }, actor(), opts));
    case "list":
      if (rest.length > 0) throw new UsageError(`多余的参数: ${rest.join(" ")}`);
      return sites.list();
    case "update": {
      if (rest.length !== 1) throw new UsageError("update 需要一个站点 id");
      if (values.name === undefined && values.url === undefined) {
        throw new UsageError("update 至少需要 --name 或 --url 之一");
      }
      if (values["same-gateway"] && values.url === undefined)
        throw new UsageError("--same-gateway 只能与 --url 一起使用");
      const id = siteIdArg(rest[0]);
      const input = { name: values.name, url: values.url, sameGateway: values["same-gateway"] === true };
      const edited = await editSite(db(), id, input, actor(), opts);
      // A move says what became of the old address's sessions and the ledger.
      return edited.move ? { ...plain(edited), move: edited.move } : plain(edited);
    }
    case "remove": {
      if (rest.length !== 1) throw new UsageError("remove 需要一个站点 id");
      const id = siteIdArg(rest[0]);
      const site = await sites.find(id);
      if (!site) throw new SiteError(`站点不存在: ${id}`);
      await removeSite(db(), id, true, actor());
      return site;
    }
    case "probe":
      if (rest.length !== 1) throw new UsageError("probe 需要一个站点 id");
      return probeSite(db(), siteIdArg(rest[0]), {
        timeoutMs: env().SITE_TIMEOUT_MS,
        perMinute: env().SITE_REQUESTS_PER_MINUTE,
      });
    case "admin-password": {
      if (rest.length > 0) throw new UsageError(`多余的参数: ${rest.join(" ")}`);
      const ended = await db().operatorSession.count();
      await setOperatorPassword(db(), await readNewPassword(), actor());
      return { passwordSet: true, endedSessions: ended };
    }
    case "signup": {
      const mode = rest[0];
      if (rest.length !== 1 || (mode !== "open" && mode !== "invite"))
        throw new UsageError("signup 需要 open 或 invite");
      await signup(db()).setMode(mode);
      return { signup: mode };
    }
    case "invite": {
      if (rest.length > 0) throw new UsageError(`多余的参数: ${rest.join(" ")}`);
      const invite = await signup(db()).createInvite(values.note ?? null);
      return { code: invite.code, expiresAt: invite.expiresAt.toISOString() };
    }
    case "vault-reseal":
      if (rest.length > 0) throw new UsageError(`多余的参数: ${rest.join(" ")}`);
      return {
        ...(await resealSavedTokens(db())),
        alertChannels: await resealAlertChannels(db()),
        hubSync: await resealHubSync(db()),
      };
    default:
      throw new UsageError(`未知命令: ${command}`);
  }
}

async function main(): Promise<number> {
  // The database is opened only once its checks passed: a refused one is never made anew here.
  let opened = false;
  try {
    await prepare();
    opened = true;
    const result = await run(process.argv.slice(2));
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      const message = (error as Error).message;
      process.stderr.write(`${message ? `错误: ${message}\n` : ""}${USAGE}\n`);
      return 2;
    }
    if (
      error instanceof SiteError ||
      error instanceof EnvError ||
      error instanceof OperatorError ||
      error instanceof StoreRefused
    ) {
      process.stderr.write(`错误: ${error.message}\n`);
      return 1;
    }
    process.stderr.write(`错误: ${(error as Error).message}\n`);
    return 1;
  } finally {
    if (opened) await closeDb(db()).catch(() => undefined);
  }
}

process.exitCode = await main();
