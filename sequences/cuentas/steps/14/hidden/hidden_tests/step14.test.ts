import assert from "node:assert/strict";
import { test } from "node:test";
import { cuentas, lines, seed, workspace } from "./harness.ts";

test("step 14: months by name", () => {
  const dir = workspace();
  seed(dir, [
    { date: "2024-02-29", cents: 100, description: "Bread" },
    { date: "2024-03-01", cents: 250, description: "Milk" },
    { date: "2024-03-31", cents: 1000, description: "Shoes" },
    { date: "2023-03-15", cents: 700, description: "Lunch" },
    { date: "2024-09-15", cents: 1500, description: "Books" },
  ]);
  assert.deepEqual(lines(cuentas(dir, "list", "--month", "March 2024").stdout), [
    "2024-03-01  €2.50  Milk",
    "2024-03-31  €10.00  Shoes",
  ]);
  assert.equal(cuentas(dir, "total", "--month", "mar 2024").stdout.trim(), "Total: €12.50");
  assert.equal(cuentas(dir, "total", "--month=MARZO 2023").stdout.trim(), "Total: €7.00");
  assert.equal(cuentas(dir, "total", "--month", "septiembre 2024").stdout.trim(), "Total: €15.00");
  assert.equal(cuentas(dir, "total", "--month", "2024-2").stdout.trim(), "Total: €1.00");
  const bad = cuentas(dir, "total", "--month", "Smarch 2024");
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /Smarch 2024/);
});
