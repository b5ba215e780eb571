import {
  importResultSchema,
  workspaceAccountSchema,
  workspaceAccountSuccessSchema,
  workspaceAccountsSchema,
  workspaceMeSchema,
  workspaceSignedInSchema,
} from "../../workspace/schemas";
import { z } from "zod";
import {
  exportCountSchema,
  exportCountSuccess,
  ledgerStatusSuccess,
  logsSuccess,
  overviewSuccess,
  summarySuccess,
  tokensSuccess,
  topupsSuccess,
  usageBalanceSuccess,
  usageSummarySuccess,
} from "../../api/schemas/accounts";
import { autoCheckinSchema, savedFieldsSchema, accountRowSchema, overviewSchema } from "../../accounts/schemas";
import { ledgerStatusSchema, usageBalanceSchema, usageSummarySchema } from "../../ledger/schemas";
import { moneySchema } from "../../gateway/families";
import { logItemSchema, tokenItemSchema, topupItemSchema } from "../../gateway/reads";
import {
  logTotalsSchema,
  logsPageSchema,
  summarySchema,
  tokensPageSchema,
  topupsPageSchema,
} from "../../site-data/schemas";
import { loginInput } from "../../auth/login-input";
import { loginSuccessSchema, logoutSuccessSchema, meSuccessSchema, userInfoSchema } from "../../auth/schemas";
import { failureSchema } from "../../core/messages";
import { siteSchema } from "../../sites/registry";
import {
  actionRecordsSuccess,
  checkinResultSuccess,
  checkinStatusSuccess,
  redeemSuccess,
  revealedKeySuccess,
  tokenDeleteSuccess,
  tokenRulesSuccess,
  tokenWriteSuccess,
} from "../../api/schemas/actions";
import {
  alertsSuccess,
  channelCreatedSuccess,
  channelTestSuccess,
  channelsSuccess,
  digestSentSuccess,
  digestSuccess,
  digestsSuccess,
  reconciliationSuccess,
  removedSuccess,
  ruleSuccess,
  rulesSuccess,
  timeZoneSuccess,
} from "../../api/schemas/alerts";
import {
  accountViewSuccess,
  compareSuccess,
  historySuccess,
  tableSuccess,
  whatIfSuccess,
} from "../../api/schemas/prices";

/** The schemas of the OpenAPI document, from the zod schemas the procedures validate with. */
export function components() {
  const registry = z.registry<{ id: string }>();
  for (const s of [
    loginInput,
    siteSchema,
    userInfoSchema,
    loginSuccessSchema,
    meSuccessSchema,
    logoutSuccessSchema,
    failureSchema,
    summarySuccess,
    logsSuccess,
    tokensSuccess,
    topupsSuccess,
    logItemSchema,
    tokenItemSchema,
    topupItemSchema,
    summarySchema,
    logsPageSchema,
    logTotalsSchema,
    tokensPageSchema,
    topupsPageSchema,
    moneySchema,
    overviewSchema,
    overviewSuccess,
    accountRowSchema,
    ledgerStatusSchema,
    ledgerStatusSuccess,
    usageSummarySchema,
    usageSummarySuccess,
    usageBalanceSchema,
    usageBalanceSuccess,
    exportCountSchema,
    exportCountSuccess,
    savedFieldsSchema,
    autoCheckinSchema,
    workspaceSignedInSchema,
    workspaceMeSchema,
    workspaceAccountSchema,
    workspaceAccountsSchema,
    workspaceAccountSuccessSchema,
    importResultSchema,
    redeemSuccess,
    checkinStatusSuccess,
    checkinResultSuccess,
    actionRecordsSuccess,
    tokenRulesSuccess,
    tokenWriteSuccess,
    tokenDeleteSuccess,
    revealedKeySuccess,
    alertsSuccess,
    channelsSuccess,
    channelCreatedSuccess,
    channelTestSuccess,
    rulesSuccess,
    ruleSuccess,
    removedSuccess,
    timeZoneSuccess,
    reconciliationSuccess,
    digestsSuccess,
    digestSuccess,
    digestSentSuccess,
    compareSuccess,
    whatIfSuccess,
    tableSuccess,
    historySuccess,
    accountViewSuccess,
  ]) {
    const id = (s.meta() as { id?: string } | undefined)?.id;
    if (!id) throw new Error("schema without id");
    registry.add(s, { id });
  }
  const { schemas } = z.toJSONSchema(registry, {
    target: "draft-2020-12",
    io: "output",
    uri: (id) => `#/components/schemas/${id}`,
  });
  // Each component is embedded in the document: drop the per-schema dialect and id markers.
  return Object.fromEntries(
    Object.entries(schemas).map(([id, s]) => {
      const copy: Record<string, unknown> = { ...s };
      delete copy.$schema;
      delete copy.$id;
      // Clients may send more fields than these; only responses are closed.
      if (id === "LoginRequest") delete copy.additionalProperties;
      return [id, copy];
    }),
  );
}

/** Every message login can answer with HTTP 200 (besides a site's own), as named examples. */
