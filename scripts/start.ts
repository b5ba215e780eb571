/** `npm start`: prepare the store, build once if there is no production build, then serve. */
import { prepareOrExit } from "./prepare";
import { buildIfNeeded, serve } from "./serve";

prepareOrExit();
buildIfNeeded();
serve();
