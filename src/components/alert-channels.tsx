"use client";

import { useState, type FormEvent } from "react";
import { errorMessage, type RouterOutputs } from "@/src/trpc/answers";
import { trpc } from "@/src/trpc/react";

export type Channel = RouterOutputs["alerts"]["channels"]["data"]["channels"][number];

/** 通知渠道: each kind's fields, the list with its 测试 button, and the form that adds one. */
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

export function Channels() {
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

/** The channels to tick for a rule or a digest; `none` says what happens without any. */
export function ChannelChecks({
  legend,
  channels,
  picked,
  onChange,
  none,
}: {
  legend: string;
  channels: Channel[];
  picked: number[];
  onChange: (next: number[]) => void;
  none: string;
}) {
  return (
    <fieldset className="field rule-channels">
      <legend>{legend}</legend>
      {channels.length === 0 ? (
        <span className="muted">{none}</span>
      ) : (
        channels.map((c) => (
          <label key={c.id} className="check">
            <input
              type="checkbox"
              checked={picked.includes(c.id)}
              onChange={(e) => onChange(e.target.checked ? [...picked, c.id] : picked.filter((x) => x !== c.id))}
            />{" "}
            {c.name}
          </label>
        ))
      )}
    </fieldset>
  );
}
