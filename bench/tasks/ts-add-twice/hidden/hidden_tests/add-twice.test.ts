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
  const dir = mkdtempSync(join(tmpdir(), "cuentas-add-twice-"));
  made.push(dir);
  return dir;
}

test("an expense already recorded is refused and nothing is saved", () => {
  const dir = workspace();
  assert.equal(cuentas(dir, "add", "2024-03-05", "12,50", "Café").code, 0);
  const before = cuentas(dir, "list").stdout;
  for (const [date, amount, description] of [
    ["2024-03-05", "12,50", "Café"],
    ["05/03/2024", "12.50", "cafe"],
    ["2024/3/5", "€12,5", "CAFÉ"],
  ]) {
    const again = cuentas(dir, "add", date, amount, description);
    assert.equal(again.code, 1, `adding ${date} ${amount} ${description} again should be refused`);
    assert.match(again.stderr, /already/i);
    assert.equal(cuentas(dir, "list").stdout, before);
  }
});

test("an expense already recorded is refused among many, with its category", () => {
  const dir = workspace();
  assert.equal(cuentas(dir, "add", "2024-03-01", "900", "Rent", "--category", "home").code, 0);
  assert.equal(cuentas(dir, "add", "2024-03-02", "3", "Bus", "ticket").code, 0);
  assert.equal(cuentas(dir, "add", "2024-03-04", "40", "Market", "--category", "food").code, 0);
  const again = cuentas(dir, "add", "2024-03-02", "3.00", "bus", "TICKET");
  assert.equal(again.code, 1);
  assert.match(again.stderr, /already/i);
  assert.equal(cuentas(dir, "total").stdout.trim(), "Total: €943.00");
});

test("an expense that differs in day, amount or description is added", () => {
  const dir = workspace();
  assert.equal(cuentas(dir, "add", "2024-03-05", "12,50", "Café").code, 0);
  assert.equal(cuentas(dir, "add", "2024-03-06", "12,50", "Café").code, 0);
  assert.equal(cuentas(dir, "add", "2024-03-05", "12,60", "Café").code, 0);
  assert.equal(cuentas(dir, "add", "2024-03-05", "-12,50", "Café").code, 0);
  assert.equal(cuentas(dir, "add", "2024-03-05", "12,50", "Café con leche").code, 0);
  assert.equal(
    cuentas(dir, "list").stdout,
    [
      "2024-03-05  €12.50  Café",
      "2024-03-05  €12.60  Café",
      "2024-03-05  -€12.50  Café",
      "2024-03-05  €12.50  Café con leche",
      "2024-03-06  €12.50  Café",
      "",
    ].join("\n"),
  );
});
