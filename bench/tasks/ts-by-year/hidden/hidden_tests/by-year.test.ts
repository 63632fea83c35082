import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
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

// A fresh folder whose data file (its documented format) holds expenses of several
// years, not in date order, with a year (2022) in which nothing was spent.
function recorded(): string {
  const dir = mkdtempSync(join(tmpdir(), "cuentas-by-year-"));
  made.push(dir);
  const expenses = [
    { date: "2023-12-31", cents: 120000, description: "Rent", category: "home" },
    { date: "2021-01-01", cents: 1250, description: "Bakery", category: "food" },
    { date: "2024-01-01", cents: 120000, description: "Rent", category: "home" },
    { date: "2021-12-31", cents: 4000, description: "Market", category: "Food" },
    { date: "2023-06-15", cents: -1999, description: "Returned shoes", category: "clothes" },
    { date: "2024-02-10", cents: 5050, description: "Market", category: "food" },
    { date: "2023-01-02", cents: 99999, description: "Sofa" },
  ];
  writeFileSync(join(dir, "cuentas.json"), JSON.stringify(expenses, null, 2) + "\n");
  return dir;
}

function output(dir: string, ...args: string[]): string {
  const run = cuentas(dir, ...args);
  assert.equal(run.code, 0, `cuentas ${args.join(" ")}: ${run.stderr}`);
  return run.stdout.trim();
}

test("by-year shows the total of each year with expenses, oldest first", () => {
  const dir = recorded();
  assert.equal(output(dir, "by-year"), ["2021  €52.50", "2023  €2,180.00", "2024  €1,250.50"].join("\n"));
});

test("by-year takes the selection options", () => {
  const dir = recorded();
  assert.equal(output(dir, "by-year", "--category", "food"), ["2021  €52.50", "2024  €50.50"].join("\n"));
  assert.equal(output(dir, "by-year", "--month", "2023-12"), "2023  €1,200.00");
  assert.equal(output(dir, "by-year", "--from", "2023-06-15"), ["2023  €1,180.01", "2024  €1,250.50"].join("\n"));
});

test("with --from and --to every year between them is listed, also those with nothing spent", () => {
  const dir = recorded();
  assert.equal(
    output(dir, "by-year", "--from", "2020-06-01", "--to", "31/01/2024"),
    ["2020  €0.00", "2021  €52.50", "2022  €0.00", "2023  €2,180.00", "2024  €1,200.00"].join("\n"),
  );
  assert.equal(output(dir, "by-year", "--from", "2022-03-01", "--to", "2022-04-01"), "2022  €0.00");
});

test("by-year writes a CSV table with --format csv", () => {
  const dir = recorded();
  assert.equal(
    output(dir, "by-year", "--format", "csv", "--from", "2021-06-01", "--to", "2023-12-31"),
    ["year,total", "2021,40.00", "2022,0.00", "2023,2180.00"].join("\n"),
  );
  assert.equal(cuentas(dir, "by-year", "--format", "xml").code, 1);
});
