/** CSV as the exports write it, shared by the ledger export and the workspace account list. */

/**
 * One record, RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes
 * doubled; records end with CRLF. (A library's per-record overhead was half the export's time for
 * a rule this small; the tests read every export back with csv-parse.)
 */
export function csvRecord(fields: ReadonlyArray<string | number>): string {
  let line = "";
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i] as string | number;
    const text = typeof f === "number" ? String(f) : /[",\r\n]/.test(f) ? `"${f.replaceAll('"', '""')}"` : f;
    line += i === 0 ? text : `,${text}`;
  }
  return `${line}\r\n`;
}

/** A text cell a spreadsheet would read as a formula (or a command) gets a leading apostrophe. */
export function neutralize(text: string): string {
  return /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
}
