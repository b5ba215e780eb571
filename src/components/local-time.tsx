"use client";

import { useEffect, useSyncExternalStore } from "react";
import { formatLocal, formatTime } from "./format";
import { setPageZone, zone } from "./usage-range";

const never = () => () => {};

/** True once in the browser (the server renders UTC and says so; the browser then shows its own zone). */
const useInBrowser = () =>
  useSyncExternalStore(
    never,
    () => true,
    () => false,
  );

/** A moment in the page's zone to the minute, `2026-11-22 23:58`; as UTC, marked so, until the page runs. */
export function LocalTime({ iso }: { iso: string }) {
  const local = useInBrowser();
  return <time dateTime={iso}>{local ? formatLocal(iso).slice(0, 16) : formatTime(iso)}</time>;
}

/**
 * Puts the page in a workspace's zone (its times and days read as its alerts do), or the browser's
 * with null: rendered before everything that shows a time, so they all read it.
 */
export function PageZone({ tz }: { tz: string | null }) {
  setPageZone(tz);
  return null;
}

/** The zone every time of the page is in, named once. */
export function ZoneNote({ workspace }: { workspace: boolean }) {
  const local = useInBrowser();
  if (!local) return null;
  return (
    <p className="muted zone-note">
      页面中的时间均为{workspace ? "工作区的时区" : "浏览器所在时区"}（{zone()}）
      {workspace && "，与提醒和日报相同；可在「提醒」中修改"}。
    </p>
  );
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
