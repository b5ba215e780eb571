/** The page themes, and the cookie that remembers the choice (read by the layout before the first paint). */
export const THEMES = [
  { key: "system", label: "跟随系统" },
  { key: "light", label: "浅色" },
  { key: "dark", label: "深色" },
] as const;
export type Theme = (typeof THEMES)[number]["key"];

export const THEME_COOKIE = "gd_theme";

export const themeOf = (value: string | undefined): Theme => (value === "light" || value === "dark" ? value : "system");
