import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const entry = resolve(import.meta.dirname, "..", "src", "cli.ts");
const loader = import.meta.resolve("tsx");

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

// The folders made for tests, removed when the process exits.
const folders: string[] = [];
process.on("exit", () => folders.forEach((folder) => rmSync(folder, { recursive: true, force: true })));

// A fresh folder per test, so each test starts with no data file.
export function workspace(): string {
  const folder = mkdtempSync(join(tmpdir(), "cuentas-test-"));
  folders.push(folder);
  return folder;
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
