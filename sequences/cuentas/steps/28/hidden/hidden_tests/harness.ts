import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const entry = resolve(import.meta.dirname, "..", "src", "cli.ts");
const loader = import.meta.resolve("tsx");

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

// A fresh folder per test, so each test starts with no data file.
export function workspace(): string {
  return mkdtempSync(join(tmpdir(), "cuentas-hidden-"));
}

export function cuentas(dir: string, ...args: string[]): Run {
  return cuentasWith({}, dir, ...args);
}

// Runs the program with extra environment variables; the program's own variables are
// otherwise unset, so the caller's environment cannot change the outcome.
export function cuentasWith(extra: Record<string, string>, dir: string, ...args: string[]): Run {
  const env = { ...process.env };
  for (const name of Object.keys(env).filter((name) => name.startsWith("CUENTAS_"))) {
    delete env[name];
  }
  const run = spawnSync(process.execPath, ["--import", loader, entry, ...args], {
    cwd: dir,
    env: { ...env, ...extra },
    encoding: "utf8",
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

// Writes expenses straight into the data file (its documented format), to set up a
// test without spawning the program once per expense.
export function seed(dir: string, expenses: { date: string; cents: number; description: string }[]): void {
  writeFileSync(join(dir, "cuentas.json"), JSON.stringify(expenses, null, 2) + "\n");
}

export function lines(text: string): string[] {
  return text.split("\n").filter((line) => line.trim() !== "");
}
