"use client";

import { useState, type FormEvent } from "react";
import { trpc } from "@/src/trpc/react";
import { errorMessage, type RouterOutputs } from "@/src/trpc/answers";
import { amountOfQuota, quotaOfAmount, type MoneySettings } from "@/src/shared/money";
import { CopyButton, InlineTabs, Modal } from "./modal";
import { GroupPicker, ModelPicker } from "./token-pickers";
import { fromZone, inZone } from "./usage-range";

export type TokenItem = Extract<RouterOutputs["account"]["tokens"], { success: true }>["data"]["items"][number];
export type Rules = Extract<RouterOutputs["tokens"]["rules"], { success: true }>["data"];
type Revealed = Extract<RouterOutputs["tokens"]["reveal"], { success: true }>["data"];

const bytes = (s: string) => new TextEncoder().encode(s).length;
const lines = (s: string) =>
  s
    .split(/[\s,，]+/)
    .map((x) => x.trim())
    .filter(Boolean);

/** `YYYY-MM-DDTHH:mm` in the page's zone, for a datetime-local field. */
const localInput = (iso: string): string => inZone(new Date(iso)).slice(0, 16).replace(" ", "T");

const unit = (money: MoneySettings) => (money.display === "TOKENS" ? "额度" : money.symbol);

/** 新建令牌 / 编辑令牌: the family's rules said next to each field, checked before sending. */
export function TokenForm({
  rules,
  token,
  onDone,
  onClose,
}: {
  rules: Rules;
  token: TokenItem | null;
  onDone: (message: string, id: number | null, name: string) => void;
  onClose: () => void;
}) {
  const create = trpc.tokens.create.useMutation();
  const update = trpc.tokens.update.useMutation();
  // The site's groups and the account's models, for pickers; free text where it publishes none.
  const options = trpc.tokens.options.useQuery(undefined, { staleTime: 60_000 });
  const offered = options.data?.success ? options.data.data : null;
  const [name, setName] = useState(token?.name ?? "");
  const [unlimited, setUnlimited] = useState(token ? token.unlimited : true);
  const [amount, setAmount] = useState(
    token && !token.unlimited && token.remainQuota !== null
      ? String(Number(amountOfQuota(token.remainQuota, rules.money).toFixed(6)))
      : "",
  );
  const [never, setNever] = useState(token ? token.expiresAt === null : true);
  const [expires, setExpires] = useState(token?.expiresAt ? localInput(token.expiresAt) : "");
  const [models, setModels] = useState(token?.models.join("\n") ?? "");
  const [ips, setIps] = useState(token?.allowIps.join("\n") ?? "");
  const [group, setGroup] = useState(token?.group ?? "");
  const [error, setError] = useState("");
  const busy = create.isPending || update.isPending;
  const size = bytes(name.trim());

  function problem(): string | null {
    if (name.trim() === "") return "请填写令牌名称";
    if (size > rules.nameBytes) return `令牌名称太长：最多 ${rules.nameBytes} 字节，现在是 ${size} 字节`;
    if (!unlimited) {
      const n = Number(amount);
      if (amount.trim() === "" || !Number.isFinite(n) || n < 0) return "请填写不小于 0 的额度，或选择无限额度";
    }
    if (!never) {
      if (!expires) return "请选择过期时间，或选择永不过期";
      if (fromZone(expires).getTime() <= Date.now()) return "过期时间应晚于现在";
    }
    return null;
  }

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const wrong = problem();
    setError(wrong ?? "");
    if (wrong) return;
    const fields = {
      name: name.trim(),
      unlimited,
      remainQuota: unlimited ? 0 : quotaOfAmount(Number(amount), rules.money),
      expiresAt: never ? null : fromZone(expires).toISOString(),
      models: lines(models),
      allowIps: lines(ips),
      group: rules.groups ? group.trim() : "",
    };
    try {
      const answer = token
        ? await update.mutateAsync({
            id: token.id,
            ...fields,
            // An untouched past expiry is left as the site has it.
            ...(!never && token.expiresAt && localInput(token.expiresAt) === expires ? { expiresAt: undefined } : {}),
          })
        : await create.mutateAsync(fields);
      if (answer.success) onDone(answer.data.message, answer.data.id, fields.name);
      else setError(answer.message);
    } catch (e) {
      setError(errorMessage(e));
    }
  }

  return (
    <Modal title={token ? `编辑令牌「${token.name}」` : "新建令牌"} onClose={onClose}>
      <form className="form token-form" onSubmit={(e) => void submit(e)} noValidate>
        <label className="field">
          <span>名称</span>
          <input
            value={name}
            onChange={(e) => {
              setName(e.target.value);
              setError("");
            }}
            maxLength={200}
            autoComplete="off"
            required
          />
          <span className={`hint${size > rules.nameBytes ? " error-text" : ""}`}>
            {size} / {rules.nameBytes} 字节（一个汉字 3 字节）
          </span>
        </label>
        <fieldset className="field">
          <legend>额度</legend>
          <label className="check">
            <input type="radio" name="quota" checked={unlimited} onChange={() => setUnlimited(true)} /> 无限额度
          </label>
          <label className="check">
            <input type="radio" name="quota" checked={!unlimited} onChange={() => setUnlimited(false)} /> 限定额度
          </label>
          {!unlimited && (
            <label className="field">
              <span>可用额度（{unit(rules.money)}）</span>
              <input
                inputMode="decimal"
                value={amount}
                onChange={(e) => setAmount(e.target.value)}
                placeholder={rules.money.display === "TOKENS" ? "如 500000" : "如 10"}
              />
            </label>
          )}
        </fieldset>
        <fieldset className="field">
          <legend>过期时间</legend>
          <label className="check">
            <input type="radio" name="expiry" checked={never} onChange={() => setNever(true)} /> 永不过期
          </label>
          <label className="check">
            <input type="radio" name="expiry" checked={!never} onChange={() => setNever(false)} /> 到期时间
          </label>
          {!never && (
            <label className="field">
              <span>到期时间（本地时间）</span>
              <input type="datetime-local" value={expires} onChange={(e) => setExpires(e.target.value)} />
            </label>
          )}
        </fieldset>
        <label className="field">
          <span>限用模型</span>
          <textarea
            value={models}
            onChange={(e) => setModels(e.target.value)}
            rows={3}
            spellCheck={false}
            placeholder="每行一个，如 gpt-4o-mini；留空为不限"
          />
        </label>
        {offered?.models && (
          <ModelPicker models={offered.models} chosen={lines(models)} onChange={(list) => setModels(list.join("\n"))} />
        )}
        <label className="field">
          <span>IP 白名单</span>
          <textarea
            value={ips}
            onChange={(e) => setIps(e.target.value)}
            rows={2}
            spellCheck={false}
            placeholder="每行一个地址或网段，如 203.0.113.7 或 10.0.0.0/8；留空为不限"
          />
          {rules.cidrOnly && <span className="hint">这个站点只收网段：单个地址会按 /32 保存</span>}
        </label>
        {rules.groups && offered?.groups && <GroupPicker options={offered} value={group} onChange={setGroup} />}
        {rules.groups && !offered?.groups && (
          <label className="field">
            <span>分组</span>
            <input
              value={group}
              onChange={(e) => setGroup(e.target.value)}
              maxLength={64}
              placeholder="留空为账户自己的分组"
            />
          </label>
        )}
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <div className="modal-actions">
          <button type="submit" className="primary" disabled={busy}>
            {busy ? "正在保存…" : token ? "保存" : "创建"}
          </button>
          <button type="button" className="secondary" onClick={onClose}>
            取消
          </button>
        </div>
      </form>
    </Modal>
  );
}

const CLIENT_TABS = [
  ["cherry", "Cherry Studio"],
  ["ccswitch", "CC Switch"],
  ["env", ".env"],
] as const;

/** The site's critical budget in words, before it is spent. */
function CriticalNote({ rules }: { rules: Rules }) {
  if (!rules.critical) return null;
  const { limit, left } = rules.critical;
  return (
    <p className={left === 0 ? "error" : "muted"}>
      这个站点每 20 分钟只允许本服务查看密钥或兑换共 {limit} 次，还剩 {left} 次。
    </p>
  );
}

/** 显示密钥 and 导出到客户端: the key fetched only on the button, gone when the dialog closes. */
export function RevealDialog({
  rules,
  token,
  onClose,
  onSpent,
}: {
  rules: Rules;
  token: { id: number; name: string };
  onClose: () => void;
  onSpent: () => void;
}) {
  const reveal = trpc.tokens.reveal.useMutation();
  const [shown, setShown] = useState<Revealed | null>(null);
  const [error, setError] = useState("");
  const [tab, setTab] = useState<"cherry" | "ccswitch" | "env">("cherry");

  async function run() {
    setError("");
    try {
      const answer = await reveal.mutateAsync({ id: token.id });
      if (answer.success) setShown(answer.data);
      else setError(answer.message);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      onSpent();
    }
  }

  return (
    <Modal title={`令牌「${token.name}」的密钥`} onClose={onClose}>
      {!shown ? (
        <div className="form">
          <p>完整密钥只在这里显示，本服务不保存它。关闭对话框后需要再次查看。</p>
          <CriticalNote rules={rules} />
          {error && (
            <p className="error" role="alert">
              {error}
            </p>
          )}
          <div className="modal-actions">
            <button
              type="button"
              className="primary"
              disabled={reveal.isPending || rules.critical?.left === 0}
              onClick={() => void run()}
            >
              {reveal.isPending ? "正在读取…" : "显示密钥"}
            </button>
            <button type="button" className="secondary" onClick={onClose}>
              取消
            </button>
          </div>
        </div>
      ) : (
        <div className="form">
          <label className="field">
            <span>密钥</span>
            <input className="mono" readOnly value={shown.key} onFocus={(e) => e.target.select()} />
          </label>
          <div className="modal-actions">
            <CopyButton text={shown.key} label="复制密钥" />
          </div>
          <h3 className="sub-title">导出到客户端</h3>
          <InlineTabs label="客户端" tabs={CLIENT_TABS} value={tab} onChange={setTab} />
          {tab === "cherry" && (
            <div className="export-box" role="tabpanel" aria-label="Cherry Studio">
              <p className="muted">
                已安装 Cherry Studio 时，点击后它会打开并预填这个站点（需在 Cherry Studio 中确认）。
              </p>
              <a className="button primary" href={shown.exports.cherryStudio.link}>
                在 Cherry Studio 中添加
              </a>
              <pre className="mono">{shown.exports.cherryStudio.json}</pre>
              <CopyButton text={shown.exports.cherryStudio.json} label="复制配置" />
            </div>
          )}
          {tab === "ccswitch" && (
            <div className="export-box" role="tabpanel" aria-label="CC Switch">
              <p className="muted">已安装 CC Switch 时，点击后它会打开并导入为供应商。</p>
              <div className="modal-actions">
                <a className="button primary" href={shown.exports.ccSwitch.claude}>
                  导入为 Claude Code 供应商
                </a>
                <a className="button secondary" href={shown.exports.ccSwitch.codex}>
                  导入为 Codex 供应商
                </a>
              </div>
            </div>
          )}
          {tab === "env" && (
            <div className="export-box" role="tabpanel" aria-label=".env">
              <p className="muted">OpenAI SDK 与多数兼容工具读取这两个变量。</p>
              <pre className="mono">{shown.exports.env}</pre>
              <CopyButton text={shown.exports.env} label="复制 .env" />
            </div>
          )}
        </div>
      )}
    </Modal>
  );
}

/** Confirms a delete, saying when the site's delete cannot be undone. */
export function DeleteDialog({
  rules,
  names,
  busy,
  error,
  onConfirm,
  onClose,
}: {
  rules: Rules;
  names: string[];
  busy: boolean;
  error: string;
  onConfirm: () => void;
  onClose: () => void;
}) {
  const what = names.length === 1 ? `令牌「${names[0]}」` : `所选的 ${names.length} 个令牌`;
  return (
    <Modal title={`删除${what}？`} onClose={onClose}>
      <div className="form">
        <p>使用{names.length === 1 ? "它" : "它们"}的程序会立即无法调用。</p>
        {rules.hardDelete && (
          <p className="error">这个站点（one-api）的删除不可恢复：令牌会被永久删除，站点管理员也无法找回。</p>
        )}
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <div className="modal-actions">
          <button type="button" className="danger" disabled={busy} onClick={onConfirm}>
            {busy ? "正在删除…" : rules.hardDelete ? "永久删除" : "删除"}
          </button>
          <button type="button" className="secondary" onClick={onClose}>
            取消
          </button>
        </div>
      </div>
    </Modal>
  );
}
