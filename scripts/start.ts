/** `npm start`: prepare the store, build once if there is no production build, then serve. */
import { prepareOrExit } from "./prepare";
import { buildIfNeeded, serveProduction } from "./serve";

process.env.NEXT_TELEMETRY_DISABLED ??= "1";
await prepareOrExit();
await buildIfNeeded();
serveProduction();
