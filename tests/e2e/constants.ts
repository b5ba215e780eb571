/** The operator's password on the store with sites (global setup sets it; the tests sign in with it). */
export const E2E_ADMIN_PASSWORD = "operator password for e2e";
