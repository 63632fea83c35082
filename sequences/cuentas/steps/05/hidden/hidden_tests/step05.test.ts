import assert from "node:assert/strict";
import { test } from "node:test";
import { cuentas, lines, seed, workspace } from "./harness.ts";

test("step 05: select a month", () => {
  const dir = workspace();
  seed(dir, [
    { date: "2024-02-29", cents: 100, description: "Bread" },
    { date: "2024-03-01", cents: 250, description: "Milk" },
    { date: "2024-03-31", cents: 1000, description: "Shoes" },
    { date: "2024-04-01", cents: 400, description: "Cinema" },
    { date: "2023-03-15", cents: 700, description: "Lunch" },
  ]);
  assert.deepEqual(lines(cuentas(dir, "list", "--month", "2024-03").stdout), [
    "2024-03-01  €2.50  Milk",
    "2024-03-31  €10.00  Shoes",
  ]);
  assert.equal(cuentas(dir, "total", "--month=2024-03").stdout.trim(), "Total: €12.50");
  const bad = cuentas(dir, "total", "--month", "2024-13");
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /2024-13/);
});
