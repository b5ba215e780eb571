import { siteRegistry } from "../../sites/registry";
import { publicProcedure, router } from "../trpc";

export const siteRouter = router({
  list: publicProcedure.query(({ ctx }) => siteRegistry(ctx.db).list()),
});
