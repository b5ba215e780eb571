"use client";

import { useState, type FormEvent } from "react";
import { errorMessage, type RouterOutputs } from "@/src/trpc/client";
import { trpc } from "@/src/trpc/react";
import { LocalTime } from "./local-time";
import { formatUsd } from "@/src/shared/money";
import { Empty, Failed, Loading, TableWrap } from "./site-data";
import { day, zone } from "./usage-range";

type Rule = RouterOutputs["alerts"]["rules"]["data"]["rules"][number];
type Channel = RouterOutputs["alerts"]["channels"]["data"]["channels"][number];
type Kind = Rule["kind"];

const KINDS: Array<{ kind: Kind; label: string; unit: string | null; hint: string }> = [
  { kind: "balance_below", label: "余额低于", unit: "美元", hint: "如 5" },
  { kind: "days_left_below", label: "余额可用天数少于", unit: "天", hint: "按近 7 天的消费速度，如 3" },
  { kind: "spend_today_above", label: "今日消费超过", unit: "美元", hint: "如 20" },
  { kind: "token_refused", label: "站点拒绝令牌", unit: null, hint: "" },
  { kind: "site_down", label: "站点无法访问超过", unit: "分钟", hint: "至少 5，如 30" },
  { kind: "checkin_failed", label: "自动签到失败或需手动签到", unit: null, hint: "" },
  { kind: "unmatched_move", label: "对账差额超过", unit: "美元", hint: "余额变化与日志不符的金额，如 1" },
];
const kindOf = (k: Kind) => KINDS.find((x) => x.kind === k) ?? KINDS[0]!;

const EVENT: Record<string, string> = { opened: "打开", reminder: "每日提醒", escalated: "加重", resolved: "已恢复" };
const DELIVERY: Record<string, string> = { pending: "等待发送", sent: "已送达", failed: "发送失败" };

function ruleText(r: { kind: Kind; threshold: number | null }): string {
  const k = kindOf(r.kind);
  return k.unit && r.threshold !== null ? `${k.label} ${r.threshold} ${k.unit}` : k.label;
}

/** 提醒: the workspace's alerts, the rules that open them and the channels they are sent to. */
export function AlertsPanel() {
  return (
    <>
      <AlertList />
      <Reconciliation />
      <Rules />
      <Channels />
    </>
  );
}

function AlertList() {
  const list = trpc.alerts.list.useQuery({ page: 1, pageSize: 50 });
  const channels = trpc.alerts.channels.useQuery();
  const names = new Map((channels.data?.data.channels ?? []).map((c) => [c.id, c.name]));
  const data = list.data?.data;
  return (
    <section className="card" aria-labelledby="alerts-title">
      <div className="card-head">
        <h2 id="alerts-title">提醒{data && data.open > 0 ? `（${data.open} 个打开）` : ""}</h2>
      </div>
      <p className="muted">
        服务器在每次同步后检查规则：条件连续两次成立才打开并通知一次，持续期间不重复，加重时再通知，恢复时通知「已恢复」。
      </p>
      {list.isPending ? (
        <Loading label="提醒" />
      ) : list.error ? (
        <Failed message={errorMessage(list.error)} onRetry={() => void list.refetch()} />
      ) : !data || data.alerts.length === 0 ? (
        <Empty>目前没有提醒：一切正常。</Empty>
      ) : (
        <ol className="alert-list">
          {data.alerts.map((a) => (
            <li key={a.id} className={`alert-item alert-${a.state}`}>
              <div className="alert-head">
                <span className={`tag tag-${a.state === "open" ? "failed" : "success"}`}>
                  {a.state === "open" ? "打开" : "已恢复"}
                </span>
                <strong>{a.account.name}</strong>
                <span className="muted">{ruleText(a.rule)}</span>
              </div>
              <p>{a.message}</p>
              <p className="muted">
                打开于 <LocalTime iso={a.openedAt} />
                {a.resolvedAt && (
                  <>
                    ，恢复于 <LocalTime iso={a.resolvedAt} />
                  </>
                )}
              </p>
              {a.deliveries.length > 0 && (
                <ul className="delivery-list">
                  {a.deliveries.map((d, i) => (
                    <li key={i} className={d.status === "failed" ? "failed-text" : "muted"}>
                      {EVENT[d.event]} → {names.get(d.channelId) ?? `渠道 #${d.channelId}`}：{DELIVERY[d.status]}
                      {d.lastError && d.status !== "sent" ? `（第 ${d.attempts} 次：${d.lastError}）` : ""}
                    </li>
                  ))}
                </ul>
              )}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

/** 对账: an account's days, its balance change against what its log explains. */
function Reconciliation() {
  const accounts = trpc.workspace.accounts.useQuery();
  const list = accounts.data?.data.accounts ?? [];
  const [picked, setPicked] = useState<number | null>(null);
  const account = picked ?? list[0]?.id ?? null;
  const tz = zone();
  // The last two weeks, in the browser's days.
  const rec = trpc.alerts.reconciliation.useQuery(
    { account: account ?? 1, tz, from: day(-13), to: day(0) },
    { enabled: account !== null },
  );
  const money = (n: number | null) => (n === null ? "—" : formatUsd(n));
  const data = rec.data?.success ? rec.data.data : null;
  return (
    <section className="card" aria-labelledby="reconcile-title">
      <div className="card-head">
        <h2 id="reconcile-title">对账</h2>
        {list.length > 0 && (
          <label className="inline">
            账户{" "}
            <select value={account ?? ""} onChange={(e) => setPicked(Number(e.target.value))}>
              {list.map((a) => (
                <option key={a.id} value={a.id}>
                  {a.alias || a.displayName || a.username}（{a.siteName ?? "已移除的站点"}）
                </option>
              ))}
            </select>
          </label>
        )}
      </div>
      <p className="muted">
        近两周每天的余额变化（当天第一个与最后一个余额快照之间）对照日志：−消费 + 充值 + 签到奖励 + 退款。差额超过 $0.01
        或当天消费的 1% 时标出：可能是日志中没有的扣费、没记入日志的充值，或站点的统计错误。
      </p>
      {account === null ? (
        <Empty>工作区还没有账户。</Empty>
      ) : rec.isPending ? (
        <Loading label="对账" />
      ) : !data ? (
        <Failed
          message={rec.error ? errorMessage(rec.error) : rec.data?.success === false ? rec.data.message : ""}
          onRetry={() => void rec.refetch()}
        />
      ) : (
        <TableWrap label="对账表格">
          <table className="table">
            <thead>
              <tr>
                <th>日期</th>
                <th className="num">余额变化</th>
                <th className="num">消费</th>
                <th className="num">充值</th>
                <th className="num">签到</th>
                <th className="num">退款</th>
                <th className="num">应有变化</th>
                <th className="num">差额</th>
              </tr>
            </thead>
            <tbody>
              {[...data.days].reverse().map((d) => (
                <tr key={d.day} className={d.flagged ? "flagged-row" : undefined}>
                  <td className="nowrap">
                    {d.day}
                    {d.flagged && <span className="tag tag-failed"> 不符</span>}
                  </td>
                  <td className="num">{money(d.changeUsd)}</td>
                  <td className="num">{money(d.consumptionUsd)}</td>
                  <td className="num">{money(d.topupsUsd)}</td>
                  <td className="num">{money(d.rewardsUsd)}</td>
                  <td className="num">{money(d.refundsUsd)}</td>
                  <td className="num">{money(d.expectedUsd)}</td>
                  <td className={`num${d.flagged ? " failed-text" : ""}`}>
                    {d.changeUsd === null ? <span className="muted">快照不足</span> : money(d.differenceUsd)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </section>
  );
}

function Rules() {
  const utils = trpc.useUtils();
  const rules = trpc.alerts.rules.useQuery();
  const channels = trpc.alerts.channels.useQuery();
  const accounts = trpc.workspace.accounts.useQuery();
  const create = trpc.alerts.createRule.useMutation();
  const update = trpc.alerts.updateRule.useMutation();
  const remove = trpc.alerts.removeRule.useMutation();
  const setZone = trpc.alerts.setTimeZone.useMutation();
  const [kind, setKind] = useState<Kind>("balance_below");
  const [account, setAccount] = useState("all");
  const [threshold, setThreshold] = useState("");
  const [step, setStep] = useState("");
  const [remind, setRemind] = useState(false);
  const [picked, setPicked] = useState<number[]>([]);
  const [note, setNote] = useState<{ ok: boolean; text: string } | null>(null);
  const accountList = accounts.data?.data.accounts ?? [];
  const channelList = channels.data?.data.channels ?? [];
  const accountName = (id: number | "all") =>
    id === "all"
      ? "全部账户"
      : (() => {
          const a = accountList.find((x) => x.id === id);
          return a ? a.alias || a.displayName || a.username : `账户 #${id}`;
        })();
  const unit = kindOf(kind).unit;
  const here = zone();

  async function run(work: () => Promise<{ success: boolean; message?: string }>, done: string) {
    setNote(null);
    try {
      const answer = await work();
      setNote(answer.success ? { ok: true, text: done } : { ok: false, text: answer.message ?? "" });
      await utils.alerts.invalidate();
      return answer.success;
    } catch (e) {
      setNote({ ok: false, text: errorMessage(e) });
      return false;
    }
  }

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const value = Number(threshold);
    if (unit && (threshold.trim() === "" || !Number.isFinite(value))) {
      setNote({ ok: false, text: `请填写${unit}` });
      return;
    }
    const ok = await run(
      () =>
        create.mutateAsync({
          kind,
          account: account === "all" ? "all" : Number(account),
          threshold: unit ? value : null,
          step: unit && step.trim() !== "" ? Number(step) : null,
          remind,
          channels: picked,
        }),
      "规则已添加",
    );
    if (ok) {
      setThreshold("");
      setStep("");
    }
  }

  const data = rules.data?.data;
  return (
    <section className="card" aria-labelledby="rules-title">
      <h2 id="rules-title">提醒规则</h2>
      {data && (
        <p className="muted">
          「今日」按 {data.timeZone} 计算。
          {data.timeZone !== here && (
            <button
              type="button"
              className="ghost small"
              onClick={() => void run(() => setZone.mutateAsync({ timeZone: here }), `已改为 ${here}`)}
            >
              改为本机时区（{here}）
            </button>
          )}
        </p>
      )}
      {rules.isPending ? (
        <Loading label="规则" />
      ) : !data || data.rules.length === 0 ? (
        <Empty>还没有规则。</Empty>
      ) : (
        <ul className="rule-list" aria-label="规则">
          {data.rules.map((r: Rule) => (
            <li key={r.id} className="rule-item">
              <span>
                <strong>{ruleText(r)}</strong>
                <span className="muted">
                  {" "}
                  · {accountName(r.account)} ·{" "}
                  {r.channels.length === 0
                    ? "只在本页显示"
                    : `通知：${r.channels.map((c) => channelList.find((x) => x.id === c)?.name ?? `#${c}`).join("、")}`}
                  {r.step !== null ? ` · 加重 ${r.step} 时再通知` : ""}
                  {r.remind ? " · 每日提醒" : ""}
                </span>
              </span>
              <span className="rule-actions">
                <label className="inline">
                  <input
                    type="checkbox"
                    checked={!r.muted}
                    onChange={(e) =>
                      void run(
                        () => update.mutateAsync({ id: r.id, muted: !e.target.checked }),
                        e.target.checked ? "规则已启用" : "规则已暂停",
                      )
                    }
                  />{" "}
                  启用
                </label>
                <button
                  type="button"
                  className="ghost small"
                  aria-label={`删除规则：${ruleText(r)}`}
                  onClick={() => void run(() => remove.mutateAsync({ id: r.id }), "规则已删除")}
                >
                  删除
                </button>
              </span>
            </li>
          ))}
        </ul>
      )}
      <form className="rule-form" onSubmit={(e) => void submit(e)} aria-label="添加规则">
        <label className="field">
          <span>条件</span>
          <select value={kind} onChange={(e) => setKind(e.target.value as Kind)}>
            {KINDS.map((k) => (
              <option key={k.kind} value={k.kind}>
                {k.label}
              </option>
            ))}
          </select>
        </label>
        {unit && (
          <label className="field">
            <span>数值（{unit}）</span>
            <input
              inputMode="decimal"
              value={threshold}
              onChange={(e) => setThreshold(e.target.value)}
              placeholder={kindOf(kind).hint}
            />
          </label>
        )}
        <label className="field">
          <span>账户</span>
          <select value={account} onChange={(e) => setAccount(e.target.value)}>
            <option value="all">全部账户</option>
            {accountList.map((a) => (
              <option key={a.id} value={a.id}>
                {a.alias || a.displayName || a.username}（{a.siteName ?? "已移除的站点"}）
              </option>
            ))}
          </select>
        </label>
        {unit && (
          <label className="field">
            <span>加重多少时再通知（可选）</span>
            <input
              inputMode="decimal"
              value={step}
              onChange={(e) => setStep(e.target.value)}
              placeholder={`同单位（${unit}）`}
            />
          </label>
        )}
        <fieldset className="field rule-channels">
          <legend>通知渠道</legend>
          {channelList.length === 0 ? (
            <span className="muted">还没有渠道：提醒只在本页显示。可在下方添加渠道。</span>
          ) : (
            channelList.map((c: Channel) => (
              <label key={c.id} className="check">
                <input
                  type="checkbox"
                  checked={picked.includes(c.id)}
                  onChange={(e) => setPicked((p) => (e.target.checked ? [...p, c.id] : p.filter((x) => x !== c.id)))}
                />{" "}
                {c.name}
              </label>
            ))
          )}
        </fieldset>
        <label className="check">
          <input type="checkbox" checked={remind} onChange={(e) => setRemind(e.target.checked)} /> 持续期间每天提醒一次
        </label>
        <button type="submit" className="primary" disabled={create.isPending}>
          添加规则
        </button>
      </form>
      {note && (
        <p className={note.ok ? "notice" : "error"} role={note.ok ? "status" : "alert"}>
          {note.text}
        </p>
      )}
    </section>
  );
}

const CHANNEL_KINDS: Array<{ type: Channel["type"]; label: string; fields: Array<[Field, string, string]> }> = [
  {
    type: "webhook",
    label: "Webhook",
    fields: [
      ["url", "Webhook 地址", "https://example.com/hooks/gateway"],
      ["secret", "签名密钥（可选）", "不填则自动生成"],
    ],
  },
  { type: "email", label: "邮件", fields: [["to", "收件地址", "you@example.com"]] },
  {
    type: "telegram",
    label: "Telegram",
    fields: [
      ["botToken", "Bot Token", "123456:ABC…"],
      ["chatId", "Chat ID", "数字，或 @频道名"],
    ],
  },
  {
    type: "ntfy",
    label: "ntfy",
    fields: [
      ["url", "主题地址", "https://ntfy.sh/my-topic"],
      ["token", "访问令牌（可选）", "tk_…"],
    ],
  },
  {
    type: "wecom",
    label: "企业微信机器人",
    fields: [["url", "机器人 Webhook 地址", "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=…"]],
  },
  {
    type: "dingtalk",
    label: "钉钉机器人",
    fields: [
      ["url", "机器人 Webhook 地址", "https://oapi.dingtalk.com/robot/send?access_token=…"],
      ["secret", "加签密钥（可选）", "SEC…"],
    ],
  },
  {
    type: "feishu",
    label: "飞书机器人",
    fields: [
      ["url", "机器人 Webhook 地址", "https://open.feishu.cn/open-apis/bot/v2/hook/…"],
      ["secret", "签名校验密钥（可选）", ""],
    ],
  },
];
type Field = "url" | "secret" | "to" | "botToken" | "chatId" | "token";

function Channels() {
  const utils = trpc.useUtils();
  const channels = trpc.alerts.channels.useQuery();
  const create = trpc.alerts.createChannel.useMutation();
  const remove = trpc.alerts.removeChannel.useMutation();
  const test = trpc.alerts.testChannel.useMutation();
  const [type, setType] = useState<Channel["type"]>("webhook");
  const [name, setName] = useState("");
  const [fields, setFields] = useState<Partial<Record<Field, string>>>({});
  const [created, setCreated] = useState<{ name: string; secret: string | null } | null>(null);
  const [note, setNote] = useState<{ ok: boolean; text: string } | null>(null);
  const kind = CHANNEL_KINDS.find((k) => k.type === type) ?? CHANNEL_KINDS[0]!;

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setNote(null);
    setCreated(null);
    const given = Object.fromEntries(
      kind.fields.map(([f]) => [f, fields[f]?.trim() ?? ""]).filter(([, v]) => v !== ""),
    ) as Partial<Record<Field, string>>;
    try {
      const answer = await create.mutateAsync({ type, name, ...given });
      if (!answer.success) {
        setNote({ ok: false, text: answer.message });
        return;
      }
      setCreated({ name: answer.data.channel.name, secret: answer.data.secret });
      setName("");
      setFields({});
      await utils.alerts.invalidate();
    } catch (e) {
      setNote({ ok: false, text: errorMessage(e) });
    }
  }

  async function act(work: () => Promise<{ success: boolean; message?: string; data?: unknown }>, done: string) {
    setNote(null);
    try {
      const answer = await work();
      setNote(answer.success ? { ok: true, text: done } : { ok: false, text: answer.message ?? "" });
      await utils.alerts.invalidate();
    } catch (e) {
      setNote({ ok: false, text: errorMessage(e) });
    }
  }

  const list = channels.data?.data.channels ?? [];
  return (
    <section className="card" aria-labelledby="channels-title">
      <h2 id="channels-title">通知渠道</h2>
      <p className="muted">
        Webhook 以 JSON POST 发送，带 X-GD-Timestamp 与 X-GD-Signature（以密钥对「时间戳.请求体」做 HMAC-SHA256）；
        邮件、Telegram、ntfy 与企业微信、钉钉、飞书机器人收到的是文字。不能发送到内网或本机地址，除非运营方允许。
      </p>
      {list.length > 0 && (
        <ul className="rule-list" aria-label="渠道">
          {list.map((c) => (
            <li key={c.id} className="rule-item">
              <span>
                <strong>{c.name}</strong>{" "}
                <span className="muted">
                  {CHANNEL_KINDS.find((k) => k.type === c.type)?.label} · {c.target}
                </span>
              </span>
              <span className="rule-actions">
                <button
                  type="button"
                  className="secondary small"
                  disabled={test.isPending}
                  onClick={() => void act(() => test.mutateAsync({ id: c.id }), `「${c.name}」：测试消息已送达`)}
                >
                  测试
                </button>
                <button
                  type="button"
                  className="ghost small"
                  aria-label={`删除渠道「${c.name}」`}
                  onClick={() => void act(() => remove.mutateAsync({ id: c.id }), "渠道已删除")}
                >
                  删除
                </button>
              </span>
            </li>
          ))}
        </ul>
      )}
      <form className="rule-form" onSubmit={(e) => void submit(e)} aria-label="添加渠道">
        <label className="field">
          <span>类型</span>
          <select value={type} onChange={(e) => setType(e.target.value as Channel["type"])}>
            {CHANNEL_KINDS.map((k) => (
              <option key={k.type} value={k.type}>
                {k.label}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          <span>名称</span>
          <input value={name} onChange={(e) => setName(e.target.value)} maxLength={40} placeholder="如 值班机器人" />
        </label>
        {kind.fields.map(([field, label, hint]) => (
          <label key={`${type}-${field}`} className="field">
            <span>{label}</span>
            <input
              value={fields[field] ?? ""}
              onChange={(e) => setFields((f) => ({ ...f, [field]: e.target.value }))}
              placeholder={hint}
              autoComplete="off"
              spellCheck={false}
            />
          </label>
        ))}
        <button type="submit" className="primary" disabled={create.isPending}>
          添加渠道
        </button>
      </form>
      {created && (
        <p className="notice" role="status">
          已添加「{created.name}」。
          {created.secret && (
            <>
              签名密钥只显示这一次：<code className="mono">{created.secret}</code>
            </>
          )}
        </p>
      )}
      {note && (
        <p className={note.ok ? "notice" : "error"} role={note.ok ? "status" : "alert"}>
          {note.text}
        </p>
      )}
    </section>
  );
}
