/**
 * The account the page was rendered for (its key from account.current), named on every call the
 * page makes (docs/design.md 24): another tab making another account active changes nothing here, and
 * a page whose account left the browser is told so instead of acting on another one.
 */
import { createContext, useContext } from "react";

/** The page's account for the calls this tab makes (set in the browser only: a server render is many pages at once). */
let current: string | null = null;

/** Called as the page's provider renders in the browser, before any of its calls. */
export function setPageAccount(key: string | null): void {
  if (typeof window !== "undefined") current = key;
}

/** The header naming the page's account (the server's PAGE_ACCOUNT_HEADER), none on pages without one. */
export function pageAccountHeaders(): Record<string, string> {
  return current === null ? {} : { "x-gd-account": current };
}

/** The page's account for what it renders (links), server and browser alike. */
export const PageAccount = createContext<string | null>(null);

/** A download's address naming the page's account (`?account=`, as REST clients name one). */
export function usePageAccountHref(path: string): string {
  const account = useContext(PageAccount);
  if (account === null) return path;
  return `${path}${path.includes("?") ? "&" : "?"}${new URLSearchParams({ account })}`;
}
