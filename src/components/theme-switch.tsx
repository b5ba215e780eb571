"use client";

import { useState } from "react";
import { THEMES, THEME_COOKIE, type Theme } from "@/src/shared/theme";

/** Light, dark, or the system's setting; remembered in this browser for a year. */
export function ThemeSwitch({ initial }: { initial: Theme }) {
  const [theme, setTheme] = useState<Theme>(initial);
  function choose(next: Theme) {
    setTheme(next);
    const root = document.documentElement;
    if (next === "system") delete root.dataset.theme;
    else root.dataset.theme = next;
    document.cookie =
      next === "system"
        ? `${THEME_COOKIE}=; Path=/; Max-Age=0; SameSite=Lax`
        : `${THEME_COOKIE}=${next}; Path=/; Max-Age=31536000; SameSite=Lax`;
  }
  return (
    <label className="theme-switch">
      外观
      <select value={theme} onChange={(e) => choose(e.target.value as Theme)}>
        {THEMES.map((t) => (
          <option key={t.key} value={t.key}>
            {t.label}
          </option>
        ))}
      </select>
    </label>
  );
}
