import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../support/server";

/**
 * The import graph of src/ (our own modules: relative and `@/` imports), read from the sources.
 * Lint forbids each upward import; this proves the whole graph has no cycle, at file and at folder
 * level, which per-folder rules alone cannot.
 */
const SRC = path.join(ROOT, "src");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === "generated" ? [] : sources(p);
    return /\.tsx?$/.test(e.name) ? [p] : [];
  });
}

function resolve(from: string, spec: string): string | null {
  const base = spec.startsWith("@/")
    ? path.join(ROOT, spec.slice(2))
    : spec.startsWith(".")
      ? path.resolve(path.dirname(from), spec)
      : null;
  if (!base || base.includes(`${path.sep}generated${path.sep}`)) return null;
  for (const candidate of [`${base}.ts`, `${base}.tsx`, path.join(base, "index.ts")]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

function graph(): Map<string, string[]> {
  const edges = new Map<string, string[]>();
  for (const file of sources(SRC)) {
    const text = readFileSync(file, "utf8");
    const targets = [...text.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)]
      .map((m) => resolve(file, m[1] ?? ""))
      .filter((t): t is string => t !== null && t.startsWith(SRC));
    edges.set(file, [...new Set(targets)]);
  }
  return edges;
}

/** One cycle of the graph as a path of nodes, or null when it has none. */
function findCycle(edges: Map<string, string[]>): string[] | null {
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (node: string): string[] | null => {
    state.set(node, "open");
    stack.push(node);
    for (const next of edges.get(node) ?? []) {
      if (state.get(next) === "open") return [...stack.slice(stack.indexOf(next)), next];
      if (!state.has(next)) {
        const found = visit(next);
        if (found) return found;
      }
    }
    stack.pop();
    state.set(node, "done");
    return null;
  };
  for (const node of edges.keys()) {
    if (!state.has(node)) {
      const found = visit(node);
      if (found) return found;
    }
  }
  return null;
}

/** src/server/<folder> for server files, src/<folder> for the rest. */
function folderOf(file: string): string {
  const parts = path.relative(SRC, file).split(path.sep);
  return parts[0] === "server" && parts.length > 2 ? `server/${parts[1]}` : (parts[0] ?? "");
}

describe("the import graph of src/", () => {
  const edges = graph();

  it("reads every module and some imports", () => {
    expect(edges.size).toBeGreaterThan(30);
    expect(edges.get(path.join(SRC, "server/api/root.ts"))).toContain(path.join(SRC, "server/api/routers/auth.ts"));
  });

  it("has no cycle between files", () => {
    expect(findCycle(edges)?.map((f) => path.relative(SRC, f)) ?? null).toBeNull();
  });

  it("has no cycle between folders", () => {
    const folders = new Map<string, string[]>();
    for (const [from, targets] of edges) {
      const a = folderOf(from);
      const list = folders.get(a) ?? [];
      for (const t of targets) if (folderOf(t) !== a) list.push(folderOf(t));
      folders.set(a, [...new Set(list)]);
    }
    expect(findCycle(folders)).toBeNull();
  });

  it("finds a cycle when there is one (the check itself can fail)", () => {
    expect(
      findCycle(
        new Map([
          ["a", ["b"]],
          ["b", ["c"]],
          ["c", ["a"]],
        ]),
      ),
    ).toEqual(["a", "b", "c", "a"]);
  });
});
