import { benchLedger, ledgerLines } from "./ledger";
const kinds = (process.env.BENCH_STORES ?? "sqlite,postgres").split(",") as ("sqlite" | "postgres")[];
const results = [];
for (const k of kinds) {
  console.error(`[bench] ledger ${k} …`);
  results.push(await benchLedger(k));
}
console.log(ledgerLines(results).join("\n"));
