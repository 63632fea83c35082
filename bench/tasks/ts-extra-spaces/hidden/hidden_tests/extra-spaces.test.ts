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

// A fresh folder whose data file (its documented format) already holds expenses
// recorded with doubled spaces.
function recorded(): string {
  const dir = mkdtempSync(join(tmpdir(), "cuentas-extra-spaces-"));
  made.push(dir);
  const expenses = [
    { date: "2024-03-05", cents: 300, description: "Bus  ticket", category: "transport" },
    { date: "2024-03-06", cents: 2000, description: "Dinner", category: "Eating out" },
    { date: "2024-03-07", cents: 1500, description: "Lunch", category: "eating  out" },
    { date: "2024-03-08", cents: 4000, description: "Market", category: "food" },
  ];
  writeFileSync(join(dir, "cuentas.json"), JSON.stringify(expenses, null, 2) + "\n");
  return dir;
}

function output(dir: string, ...args: string[]): string {
  const run = cuentas(dir, ...args);
  assert.equal(run.code, 0, `cuentas ${args.join(" ")}: ${run.stderr}`);
  return run.stdout.trim();
}

test("search finds descriptions whatever the spaces between the words", () => {
  const dir = recorded();
  const found = "2024-03-05  €3.00  Bus  ticket [transport]";
  assert.equal(output(dir, "search", "bus", "ticket"), found);
  assert.equal(output(dir, "search", "BUS   TICKET"), found);
});

test("delete removes a description written with other spaces", () => {
  const dir = recorded();
  assert.equal(output(dir, "delete", "2024-03-05", "bus", "ticket"), "Deleted 1 expense");
  assert.equal(output(dir, "total"), "Total: €75.00");
});

test("categories that differ in spaces are one category everywhere", () => {
  const dir = recorded();
  assert.equal(output(dir, "by-category"), ["food  €40.00", "Eating out  €35.00", "transport  €3.00"].join("\n"));
  assert.equal(
    output(dir, "list", "--category", "eating out"),
    ["2024-03-06  €20.00  Dinner [Eating out]", "2024-03-07  €15.00  Lunch [eating  out]"].join("\n"),
  );
  assert.equal(output(dir, "total", "--category", "EATING   OUT"), "Total: €35.00");
  assert.equal(output(dir, "budget", "eating out=100"), "eating out  €35.00 of €100.00, €65.00 left");
});

test("an imported row that differs from a recorded expense only in spaces is a duplicate", () => {
  const dir = recorded();
  const file = join(dir, "bank.csv");
  writeFileSync(file, "date,amount,category,description\n2024-03-05,3.00,transport,Bus ticket\n2024-03-09,2.00,,Tea\n");
  assert.equal(cuentas(dir, "import", file).code, 0);
  assert.equal(output(dir, "total"), "Total: €80.00");
  assert.equal(output(dir, "search", "bus ticket"), "2024-03-05  €3.00  Bus  ticket [transport]");
});
