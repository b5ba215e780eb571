/**
 * The names of this browser's accounts as the account menu last showed them, kept in the browser
 * (never on the server, never a secret), so an account whose session ended can still be named.
 */
const KEY = "gd-account-names";
const MAX = 40;

type Names = Record<string, string>;
const keyOf = (siteId: number, userId: number) => `${siteId}:${userId}`;

function read(): Names {
  try {
    const parsed: unknown = JSON.parse(localStorage.getItem(KEY) ?? "{}");
    return parsed !== null && typeof parsed === "object" ? (parsed as Names) : {};
  } catch {
    return {};
  }
}

export function rememberNames(accounts: Array<{ siteId: number; userId: number; name: string }>): void {
  try {
    const names = { ...read() };
    for (const a of accounts) names[keyOf(a.siteId, a.userId)] = a.name;
    const kept = Object.entries(names).slice(-MAX);
    localStorage.setItem(KEY, JSON.stringify(Object.fromEntries(kept)));
  } catch {
    // Storage may be off (a private window): the note then names the user id.
  }
}

export function rememberedName(siteId: number, userId: number): string | null {
  try {
    return read()[keyOf(siteId, userId)] ?? null;
  } catch {
    return null;
  }
}
