// Every test process shares one known session password and keeps its logs quiet.
process.env.SESSION_PASSWORD ??= "test-password-0123456789-abcdefghijklmnopqrstuvwxyz";
process.env.LOG_LEVEL ??= "silent";
process.env.LOGIN_RATE_LIMIT ??= "0";
