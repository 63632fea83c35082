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
  const env = { ...process.env };
  delete env.CUENTAS_FILE;
  const run = spawnSync(process.execPath, ["--import", loader, entry, ...args], {
    cwd: dir,
    env,
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
