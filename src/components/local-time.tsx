"use client";

import { useEffect, useSyncExternalStore } from "react";
import { formatLocal, formatTime } from "./format";
import { zone } from "./usage-range";

const never = () => () => {};

/** True once in the browser (the server renders UTC and says so; the browser then shows its own zone). */
const useInBrowser = () =>
  useSyncExternalStore(
    never,
    () => true,
    () => false,
  );

/** A moment in the browser's zone to the minute, `2026-11-22 23:58`; as UTC, marked so, until the page runs. */
export function LocalTime({ iso }: { iso: string }) {
  const local = useInBrowser();
  return <time dateTime={iso}>{local ? formatLocal(iso).slice(0, 16) : formatTime(iso)}</time>;
}

/** The zone every time of the page is in, named once. */
export function ZoneNote() {
  const local = useInBrowser();
  return local ? <p className="muted zone-note">页面中的时间均为浏览器所在时区（{zone()}）。</p> : null;
}

/**
 * After a sign-in or a switch the page is rebuilt and the focus would fall to the body: it is put
 * on the page's main region instead, where a keyboard or a screen reader goes on from.
 */
export function FocusMain() {
  useEffect(() => {
    if (document.activeElement === document.body) document.getElementById("main")?.focus({ preventScroll: true });
  });
  return null;
}
