import assert from "node:assert/strict";
import { test } from "node:test";
import { cuentas, lines, seed, workspace } from "./harness.ts";

test("step 04: totals over a period and a category", () => {
  const dir = workspace();
  seed(dir, [
    { date: "2024-03-01", cents: 250, description: "Milk" },
    { date: "2024-04-02", cents: 1999, description: "Book" },
  ]);
  assert.equal(cuentas(dir, "add", "2024-03-10", "30,05", "Market", "--category", "food").code, 0);
  assert.equal(cuentas(dir, "add", "2024-03-20", "12.45", "Bakery", "--category=food").code, 0);
  assert.equal(cuentas(dir, "total").stdout.trim(), "Total: €64.99");
  assert.equal(cuentas(dir, "total", "--to", "2024-03-31").stdout.trim(), "Total: €45.00");
  assert.equal(cuentas(dir, "total", "--category", "food", "--from=2024-03-15").stdout.trim(), "Total: €12.45");
  assert.equal(cuentas(dir, "total", "--from", "2025-01-01").stdout.trim(), "Total: €0.00");
  assert.deepEqual(lines(cuentas(dir, "list", "--category", "food").stdout), [
    "2024-03-10  €30.05  Market [food]",
    "2024-03-20  €12.45  Bakery [food]",
  ]);
});
