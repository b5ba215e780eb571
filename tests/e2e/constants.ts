/** The operator's password on the store with sites (global setup sets it; the tests sign in with it). */
export const E2E_ADMIN_PASSWORD = "operator password for e2e";

/** The one redeem code of the e2e writes' site ($10). */
export const E2E_REDEEM_CODE = "E2E0REDEEM0CODE000000000000000001";
