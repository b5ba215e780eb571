/**
 * A consume entry's charge against the site's published list (docs/design.md 27): whether the
 * ratios it was billed at are the list's price of its model for its group, and what the list's
 * price would have charged, by the family's own arithmetic (charge-check.ts) with the list's
 * ratios put in place of the logged ones. Cache, image and audio ratios stay as logged: a list
 * gives none of them.
 */
import { formatUsd } from "../../shared/money";
import { checkCharge, num, type ChargeCheck, type CheckedEntry } from "./charge-check";

/** A model's listed price at group ratio 1: USD per 1M input and output tokens, or per call. */
export type ListFigures = { inputPerM: number | null; outputPerM: number | null; perCall: number | null };

export type ListCheck = { expected: number; ok: boolean; note: string } | { expected: null; reason: string };

export const LIST_UNKNOWN = {
  unlisted: "价目表中没有该模型",
  noList: "站点未公开价目表",
  group: "不知道该分组的倍率",
} as const;

/** Ratios compare equal within this (the list's figures are USD rounded to 9 digits). */
const TOLERANCE = 1e-6;
const same = (a: number, b: number) => Math.abs(a - b) <= TOLERANCE * Math.max(Math.abs(a), Math.abs(b), 1e-9);
/** A ratio from the list's USD, without the float noise of the division. */
const clean = (x: number) => Number(x.toPrecision(12));

/** The group an entry was billed in, where its log says it (done-hub's fallback group first). */
export function loggedGroup(detail: CheckedEntry["detail"]): string | null {
  const backup = detail.is_backup_group === true ? detail.backup_group_name : undefined;
  for (const v of [backup, detail.group_name, detail.group]) if (typeof v === "string" && v !== "") return v;
  return null;
}

/** The prices an entry was billed at (USD per 1M tokens, or per call, group ratio included). */
type Billed = { input: number; output: number } | { perCall: number };

function billedOf(e: CheckedEntry, qpu: number): Billed | null {
  const d = e.detail;
  const gr = num(d, "group_ratio");
  if (gr === null) return null;
  const perM = (ratio: number) => (ratio * gr * 1e6) / qpu;
  if ("price_type" in d || "input_ratio" in d) {
    const input = num(d, "input_ratio") ?? 0;
    if (d.price_type === "times") return { perCall: (1000 * input * gr) / qpu };
    return { input: perM(input), output: perM(num(d, "output_ratio") ?? 0) };
  }
  const price = num(d, "model_price") ?? -1;
  if (price >= 0) return { perCall: price * gr };
  const ratio = num(d, "model_ratio") ?? 0;
  return { input: perM(ratio), output: perM(ratio * (num(d, "completion_ratio") ?? 0)) };
}

/** The entry's ratios replaced by the list's, for the family's arithmetic. */
function listedDetail(e: CheckedEntry, qpu: number, list: ListFigures, gr: number): CheckedEntry["detail"] {
  const d = { ...e.detail, group_ratio: gr };
  const perToken = (usdPerM: number) => clean((usdPerM * qpu) / 1e6);
  if ("price_type" in d || "input_ratio" in d) {
    if (list.perCall !== null && list.inputPerM === null) {
      return { ...d, price_type: "times", input_ratio: clean((list.perCall * qpu) / 1000), output_ratio: 0 };
    }
    return {
      ...d,
      price_type: "tokens",
      input_ratio: perToken(list.inputPerM ?? 0),
      output_ratio: perToken(list.outputPerM ?? 0),
    };
  }
  if (list.perCall !== null && list.inputPerM === null) return { ...d, model_price: list.perCall };
  const input = list.inputPerM ?? 0;
  const completion = input > 0 ? clean((list.outputPerM ?? 0) / input) : 0;
  return { ...d, model_price: -1, model_ratio: perToken(input), completion_ratio: completion };
}

/** Notes already written (a pass writes the same few thousands of times): bounded. */
const NOTES = new Map<string, string>();
const NOTES_KEPT = 2000;
function noted(key: string, make: () => string): string {
  let note = NOTES.get(key);
  if (note === undefined) {
    if (NOTES.size >= NOTES_KEPT) NOTES.clear();
    note = make();
    NOTES.set(key, note);
  }
  return note;
}

const words = (b: Billed, gr: number | null, group: string | null) => {
  const price =
    "perCall" in b ? `${formatUsd(b.perCall)}/次` : `${formatUsd(b.input)} / ${formatUsd(b.output)} 每百万 tokens`;
  return group === null ? price : `${price}（分组 ${group}${gr === null ? "" : `，倍率 ${gr}`}）`;
};

/**
 * The entry against the list: `list` the model's listed figures at the entry's time (null when
 * unlisted), `groupRatio` the list's ratio of the entry's group, `own` the entry's checkCharge where
 * it was taken already. Null for an entry that is not a charge; the reason where the arithmetic
 * itself cannot be taken (the same as checkCharge's).
 */
export function listCharge(
  e: CheckedEntry,
  qpu: number,
  list: ListFigures | null,
  group: { name: string | null; ratio: number | null },
  own: ChargeCheck | null = checkCharge(e, qpu),
): ListCheck | null {
  if (own === null) return null;
  if (own.expected === null) return { expected: null, reason: own.reason };
  if (list === null || (list.inputPerM === null && list.perCall === null))
    return { expected: null, reason: LIST_UNKNOWN.unlisted };
  if (group.ratio === null) return { expected: null, reason: LIST_UNKNOWN.group };
  const billed = billedOf(e, qpu);
  if (billed === null) return { expected: null, reason: LIST_UNKNOWN.group };
  const listed: Billed =
    list.perCall !== null && list.inputPerM === null
      ? { perCall: list.perCall * group.ratio }
      : { input: (list.inputPerM ?? 0) * group.ratio, output: (list.outputPerM ?? 0) * group.ratio };
  const matches =
    "perCall" in billed && "perCall" in listed
      ? same(billed.perCall, listed.perCall)
      : "input" in billed &&
        "input" in listed &&
        same(billed.input, listed.input) &&
        same(billed.output, listed.output);
  const key = JSON.stringify([billed, listed, group]);
  const agreed = noted(`=${key}`, () => `与价目表一致：${words(listed, group.ratio, group.name)}`);
  if (matches) return { expected: own.expected, ok: true, note: agreed };
  const atList = checkCharge({ ...e, detail: listedDetail(e, qpu, list, group.ratio) }, qpu);
  if (atList === null || atList.expected === null)
    return { expected: null, reason: atList?.reason ?? LIST_UNKNOWN.unlisted };
  // A ratio that moves no charge (a completion ratio where nothing was completed) is no difference.
  if (atList.expected === own.expected) return { expected: own.expected, ok: true, note: agreed };
  const note = noted(
    key,
    () => `按 ${words(billed, null, null)} 计费，价目表为 ${words(listed, group.ratio, group.name)}`,
  );
  return { expected: atList.expected, ok: false, note };
}
