"use client";

import { useState, type FormEvent } from "react";
import { errorMessage } from "@/src/trpc/answers";
import { trpc } from "@/src/trpc/react";
import { ChannelChecks } from "./alert-channels";
import { LocalTime } from "./local-time";
import { Empty, Loading } from "./site-data";

type Cadence = "daily" | "weekly" | "monthly";

const CADENCE: Record<Cadence, { label: string; covers: string }> = {
  daily: { label: "日报", covers: "每天发送前一天的消费" },
  weekly: { label: "周报", covers: "每周发送前 7 天的消费" },
  monthly: { label: "月报", covers: "每月 1 日发送上个月，附对账单" },
};

const WEEKDAYS = ["周一", "周二", "周三", "周四", "周五", "周六", "周日"];

/** When a digest goes, in words: "每天 09:00", "每周一 09:00", "每月 1 日 09:00". */
const whenOf = (d: { cadence: Cadence; time: string; weekday: number | null }) =>
  d.cadence === "daily"
    ? `每天 ${d.time}`
    : d.cadence === "weekly"
      ? `每${WEEKDAYS[(d.weekday ?? 1) - 1]} ${d.time}`
      : `每月 1 日 ${d.time}`;

/** 摘要: the workspace's daily, weekly and monthly summaries, and the form that sets one. */
export function Digests() {
  const utils = trpc.useUtils();
  const digests = trpc.alerts.digests.useQuery();
  const channels = trpc.alerts.channels.useQuery();
  const set = trpc.alerts.setDigest.useMutation();
  const remove = trpc.alerts.removeDigest.useMutation();
  const send = trpc.alerts.sendDigest.useMutation();
  const [cadence, setCadence] = useState<Cadence>("daily");
  const [time, setTime] = useState("09:00");
  const [weekday, setWeekday] = useState(1);
  const [picked, setPicked] = useState<number[]>([]);
  const [note, setNote] = useState<{ ok: boolean; text: string } | null>(null);
  const channelList = channels.data?.data.channels ?? [];
  const channelNames = (ids: number[]) =>
    ids.map((c) => channelList.find((x) => x.id === c)?.name ?? `#${c}`).join("、");

  async function run(work: () => Promise<{ success: boolean; message?: string; data?: unknown }>, done: string) {
    setNote(null);
    try {
      const answer = await work();
      const said = (answer.data as { message?: string } | undefined)?.message;
      setNote(answer.success ? { ok: true, text: said ?? done } : { ok: false, text: answer.message ?? "" });
      await utils.alerts.digests.invalidate();
      return answer.success;
    } catch (e) {
      setNote({ ok: false, text: errorMessage(e) });
      return false;
    }
  }

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    await run(
      () => set.mutateAsync({ cadence, time, weekday: cadence === "weekly" ? weekday : null, channels: picked }),
      `${CADENCE[cadence].label}已保存`,
    );
  }

  const data = digests.data?.data;
  return (
    <section className="card" aria-labelledby="digests-title">
      <h2 id="digests-title">摘要</h2>
      <p className="muted">
        按时把各账户与各模型的消费（与上一周期对比）、余额与可用天数、未恢复的提醒和签到结果发到渠道
        {data ? `；时刻按 ${data.timeZone} 计算` : ""}。
      </p>
      {digests.isPending ? (
        <Loading label="摘要" />
      ) : !data || data.digests.length === 0 ? (
        <Empty>还没有摘要。</Empty>
      ) : (
        <ul className="rule-list" aria-label="摘要">
          {data.digests.map((d) => (
            <li key={d.id} className="rule-item">
              <span>
                <strong>
                  {CADENCE[d.cadence].label} · {whenOf(d)}
                </strong>
                <span className="muted">
                  {" "}
                  · {CADENCE[d.cadence].covers} · 发到：{channelNames(d.channels)}
                  {d.lastSentAt ? (
                    <>
                      {" "}
                      · 上次 <LocalTime iso={d.lastSentAt} />
                    </>
                  ) : (
                    ""
                  )}
                </span>
              </span>
              <span className="rule-actions">
                <button
                  type="button"
                  className="ghost small"
                  disabled={send.isPending}
                  onClick={() => void run(() => send.mutateAsync({ id: d.id }), "摘要已排队发送")}
                >
                  立即发送
                </button>
                <button
                  type="button"
                  className="ghost small"
                  aria-label={`删除${CADENCE[d.cadence].label}`}
                  onClick={() => void run(() => remove.mutateAsync({ id: d.id }), `${CADENCE[d.cadence].label}已删除`)}
                >
                  删除
                </button>
              </span>
            </li>
          ))}
        </ul>
      )}
      <form className="rule-form" onSubmit={(e) => void submit(e)} aria-label="设置摘要">
        <label className="field">
          <span>周期</span>
          <select value={cadence} onChange={(e) => setCadence(e.target.value as Cadence)}>
            {(Object.keys(CADENCE) as Cadence[]).map((c) => (
              <option key={c} value={c}>
                {CADENCE[c].label}
              </option>
            ))}
          </select>
        </label>
        {cadence === "weekly" && (
          <label className="field">
            <span>星期</span>
            <select value={weekday} onChange={(e) => setWeekday(Number(e.target.value))}>
              {WEEKDAYS.map((w, i) => (
                <option key={w} value={i + 1}>
                  {w}
                </option>
              ))}
            </select>
          </label>
        )}
        <label className="field">
          <span>时刻</span>
          <input type="time" value={time} onChange={(e) => setTime(e.target.value)} required />
        </label>
        <p className="muted digest-covers">{CADENCE[cadence].covers}。</p>
        <ChannelChecks
          legend="发到"
          channels={channelList}
          picked={picked}
          onChange={setPicked}
          none="还没有渠道：请先在下方添加通知渠道。"
        />
        <button type="submit" className="primary" disabled={set.isPending}>
          保存摘要
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
