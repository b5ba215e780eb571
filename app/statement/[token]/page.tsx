import type { Metadata } from "next";
import { serverCaller } from "@/src/trpc/server";

export const dynamic = "force-dynamic";
export const metadata: Metadata = {
  title: "对账单下载",
  robots: { index: false, follow: false },
  referrer: "no-referrer",
};

const SAID: Record<"used" | "expired" | "unknown", string> = {
  used: "这个链接已经用过：对账单只能通过链接下载一次。请登录控制台，在「导出」中下载。",
  expired: "链接已过期（7 天内有效）。请登录控制台，在「导出」中下载。",
  unknown: "链接无效：请检查是否复制完整，或登录控制台在「导出」中下载。",
};

/**
 * Where a monthly digest's link leads: the month and a download button. Opening the page uses
 * nothing (a chat's link preview may open it); the download works once.
 */
export default async function StatementLinkPage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  const api = await serverCaller();
  const { data } = await api.alerts.statementLink({ token });
  return (
    <main id="main" tabIndex={-1} className="page narrow">
      <section className="card">
        <h1>{data.month ? `${data.month} 用量对账单` : "对账单下载"}</h1>
        {data.state === "ready" ? (
          <>
            <p>
              这是工作区全部账户 {data.month} 的对账单（PDF）。链接只能下载一次，
              {data.expiresAt ? `${data.expiresAt.slice(0, 16).replace("T", " ")} UTC 前有效` : ""}。
            </p>
            <p>
              <a className="button primary" href={`/api/alerts/statement/${encodeURIComponent(token)}`} download>
                下载对账单
              </a>
            </p>
          </>
        ) : (
          <p role="status">{SAID[data.state]}</p>
        )}
        <p className="muted">
          <a href="/">打开控制台</a>
        </p>
      </section>
    </main>
  );
}
