import assert from "node:assert/strict";
import { test } from "node:test";
import { cuentas, lines, seed, workspace } from "./harness.ts";

test("step 27: a week given by one of its days or loosely written", () => {
  const dir = workspace();
  seed(dir, [
    { date: "2024-03-04", cents: 1000, description: "Monday" },
    { date: "2024-03-03", cents: 300, description: "Sunday before" },
    { date: "2024-03-10", cents: 1300, description: "Sunday after" },
    { date: "2024-12-30", cents: 500, description: "Year end" },
    { date: "2024-01-02", cents: 50, description: "First week" },
  ]);
  assert.deepEqual(lines(cuentas(dir, "list", "--week", "6/3/2024").stdout), [
    "2024-03-04  €10.00  Monday",
    "2024-03-10  €13.00  Sunday after",
  ]);
  assert.equal(cuentas(dir, "total", "--week=2024-03-10").stdout.trim(), "Total: €23.00");
  assert.equal(cuentas(dir, "total", "--week", "2025-01-01").stdout.trim(), "Total: €5.00");
  assert.equal(cuentas(dir, "total", "--week", "2024W10").stdout.trim(), "Total: €23.00");
  assert.equal(cuentas(dir, "total", "--week", "2024-w09").stdout.trim(), "Total: €3.00");
  assert.equal(cuentas(dir, "total", "--week", "2024-W1").stdout.trim(), "Total: €0.50");
  const bad = cuentas(dir, "total", "--week", "next week");
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /next week/);
});
