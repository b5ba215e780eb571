import type { Metadata } from "next";
import type { ReactNode } from "react";
import "./globals.css";

// Every page is rendered per request: its scripts carry the request's CSP nonce (proxy.ts).
export const dynamic = "force-dynamic";

export const metadata: Metadata = {
  title: "网关站点控制台",
  description: "登录 one-api / new-api 站点，查看账户与额度",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="zh-CN">
      <body>{children}</body>
    </html>
  );
}
