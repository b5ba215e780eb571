import type { Metadata } from "next";
import { cookies } from "next/headers";
import type { ReactNode } from "react";
import { ThemeSwitch } from "@/src/components/theme-switch";
import { THEME_COOKIE, themeOf } from "@/src/shared/theme";
import "./globals.css";

// Every page is rendered per request: its scripts carry the request's CSP nonce (proxy.ts).
export const dynamic = "force-dynamic";

export const metadata: Metadata = {
  title: "网关站点控制台",
  description: "登录 one-api / new-api 站点，查看账户与额度",
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  // The theme chosen in this browser, on <html> from the first paint (no flash of the other one).
  const theme = themeOf((await cookies()).get(THEME_COOKIE)?.value);
  return (
    <html lang="zh-CN" data-theme={theme === "system" ? undefined : theme}>
      <body>
        <a className="skip-link" href="#main">
          跳到主要内容
        </a>
        {children}
        <footer className="site-foot">
          <ThemeSwitch initial={theme} />
        </footer>
      </body>
    </html>
  );
}
