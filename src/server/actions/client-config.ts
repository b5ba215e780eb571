/**
 * 导出到客户端: a revealed key as the chat and coding clients take it. Cherry Studio's import link
 * (`cherrystudio://providers/api-keys?v=1&data=…`: base64 of `{id, name, type, baseUrl, apiKey}`
 * with `+` and `/` written `_` and `-`, its own convention; the base address without `/v1`, which
 * it adds), CC Switch's (`ccswitch://v1/import?resource=provider&app=…`: Claude Code at the site's
 * root, Codex at `/v1`), and a `.env` block for the OpenAI SDKs.
 */
import type { ClientConfigs } from "./schemas";

type Source = { siteName: string; baseUrl: string; key: string; model: string | null };

const root = (url: string) => url.replace(/\/+$/, "");

/** A value a `.env` reader takes as one word, unquoted; anything else is quoted and escaped. */
const PLAIN_VALUE = /^[A-Za-z0-9._~+/=:@%?&-]*$/;

/**
 * One `NAME=value` line of a `.env` file: a value outside plain characters is written in double
 * quotes with `\`, `"`, `$`, `` ` `` and line breaks escaped, so no value ends its line or starts
 * another variable.
 */
export function envLine(name: string, value: string): string {
  if (PLAIN_VALUE.test(value)) return `${name}=${value}`;
  const escaped = value.replace(/[\\"$`]/g, "\\$&").replace(/\r\n|\r|\n/g, "\\n");
  return `${name}="${escaped}"`;
}

/** A text as one comment line: its line breaks and other control characters as spaces. */
export const commentText = (text: string) =>
  Array.from(text, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x20 || code === 0x7f || code === 0x2028 || code === 0x2029 ? " " : c;
  }).join("");

/** A provider id a client keeps: letters, digits and dashes of the site's host. */
function providerId(baseUrl: string): string {
  let host = baseUrl;
  try {
    host = new URL(baseUrl).host;
  } catch {
    // The site's address was checked when it was added; fall back to the text.
  }
  return `gd-${host.toLowerCase().replace(/[^a-z0-9]+/g, "-")}`.slice(0, 60);
}

function cherryLink(json: Record<string, string>): string {
  const data = Buffer.from(JSON.stringify(json), "utf8").toString("base64").replaceAll("+", "_").replaceAll("/", "-");
  return `cherrystudio://providers/api-keys?v=1&data=${data}`;
}

function ccSwitchLink(app: "claude" | "codex", s: Source): string {
  const params = new URLSearchParams({
    resource: "provider",
    app,
    name: s.siteName,
    homepage: root(s.baseUrl),
    endpoint: app === "codex" ? `${root(s.baseUrl)}/v1` : root(s.baseUrl),
    apiKey: s.key,
  });
  if (s.model) params.set("model", s.model);
  return `ccswitch://v1/import?${params.toString()}`;
}

export function clientConfigs(s: Source): ClientConfigs {
  const cherry = {
    id: providerId(s.baseUrl),
    name: s.siteName,
    type: "openai",
    baseUrl: root(s.baseUrl),
    apiKey: s.key,
  };
  return {
    env: `${envLine("OPENAI_BASE_URL", `${root(s.baseUrl)}/v1`)}\n${envLine("OPENAI_API_KEY", s.key)}\n`,
    cherryStudio: { link: cherryLink(cherry), json: JSON.stringify(cherry, null, 2) },
    ccSwitch: { claude: ccSwitchLink("claude", s), codex: ccSwitchLink("codex", s) },
  };
}
