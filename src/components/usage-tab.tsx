"use client";

import dynamic from "next/dynamic";

/**
 * The 用量分析 tab: its panel and the chart library load only when the tab is open, so no other
 * page (the sign-in page least of all) carries them.
 */
export const UsageTab = dynamic(() => import("./usage-panel"), {
  ssr: false,
  loading: () => (
    <p className="state" role="status">
      正在载入用量分析…
    </p>
  ),
});
