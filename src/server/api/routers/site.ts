import { z } from "zod";
import { siteRegistry, siteSchema } from "../../sites/registry";
import { publicProcedure, router } from "../trpc";

export const siteRouter = router({
  list: publicProcedure.output(z.array(siteSchema)).query(({ ctx }) => siteRegistry(ctx.db).list()),
});
