import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { test } from "node:test";

// The folders the tests make, removed when the process exits.
const made: string[] = [];
process.on("exit", () => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

const entry = resolve(import.meta.dirname, "..", "src", "cli.ts");
const loader = import.meta.resolve("tsx");

// Runs the program in `dir` with none of its CUENTAS_* variables set, so the caller's
// environment cannot change the outcome.
function cuentas(dir: string, ...args: string[]) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("CUENTAS_")));
  const run = spawnSync(process.execPath, ["--import", loader, entry, ...args], { cwd: dir, env, encoding: "utf8" });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), "cuentas-every-month-"));
  made.push(dir);
  return dir;
}

function listed(dir: string): string[] {
  const run = cuentas(dir, "list");
  assert.equal(run.code, 0, run.stderr);
  return run.stdout.split("\n").filter((line) => line !== "");
}

test("an expense repeats every month until the month given, on the last day of short months", () => {
  const dir = workspace();
  const added = cuentas(dir, "add", "2024-01-31", "850", "Rent", "--category", "home", "--until", "2024-04");
  assert.equal(added.code, 0, added.stderr);
  assert.deepEqual(listed(dir), [
    "2024-01-31  €850.00  Rent [home]",
    "2024-02-29  €850.00  Rent [home]",
    "2024-03-31  €850.00  Rent [home]",
    "2024-04-30  €850.00  Rent [home]",
  ]);
});

test("the month it repeats until may be named, and the repetition crosses the new year", () => {
  const dir = workspace();
  assert.equal(cuentas(dir, "add", "15/11/2024", "9,99", "Phone", "--until", "February 2025").code, 0);
  assert.equal(cuentas(dir, "add", "2023-01-29", "30", "Gym", "--until=mar 2023").code, 0);
  assert.deepEqual(listed(dir), [
    "2023-01-29  €30.00  Gym",
    "2023-02-28  €30.00  Gym",
    "2023-03-29  €30.00  Gym",
    "2024-11-15  €9.99  Phone",
    "2024-12-15  €9.99  Phone",
    "2025-01-15  €9.99  Phone",
    "2025-02-15  €9.99  Phone",
  ]);
  assert.equal(cuentas(dir, "total", "--month", "2025-01").stdout.trim(), "Total: €9.99");
});

test("repeating until the first day's own month records it once", () => {
  const dir = workspace();
  assert.equal(cuentas(dir, "add", "2024-06-10", "20", "Gym", "--until", "2024-06").code, 0);
  assert.deepEqual(listed(dir), ["2024-06-10  €20.00  Gym"]);
});

test("a month to repeat until before the first day is refused and nothing is recorded", () => {
  const dir = workspace();
  assert.equal(cuentas(dir, "add", "2024-01-05", "1", "Tea").code, 0);
  const refused = cuentas(dir, "add", "2024-03-31", "850", "Rent", "--until", "2024-02");
  assert.equal(refused.code, 1);
  assert.notEqual(refused.stderr.trim(), "");
  assert.deepEqual(listed(dir), ["2024-01-05  €1.00  Tea"]);
  assert.equal(cuentas(dir, "add", "2024-03-31", "850", "Rent", "--until", "next year").code, 1);
  assert.deepEqual(listed(dir), ["2024-01-05  €1.00  Tea"]);
});
