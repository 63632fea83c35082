import assert from "node:assert/strict";
import { test } from "node:test";
import { cuentas, lines, seed, workspace } from "./harness.ts";

test("step 07: totals per category", () => {
  const dir = workspace();
  seed(dir, [{ date: "2024-03-02", cents: 300, description: "Tip" }]);
  for (const [date, amount, what, category] of [
    ["2024-03-05", "20", "Market", "food"],
    ["2024-03-07", "25,50", "Bakery", "food"],
    ["2024-03-01", "120", "Rent share", "home"],
    ["2024-04-01", "3", "Bus", "transport"],
    ["2024-03-09", "3", "Tram", "transport"],
  ]) {
    assert.equal(cuentas(dir, "add", date, amount, what, "--category", category).code, 0);
  }
  assert.deepEqual(lines(cuentas(dir, "by-category").stdout), [
    "home  €120.00",
    "food  €45.50",
    "transport  €6.00",
    "(none)  €3.00",
  ]);
  assert.deepEqual(lines(cuentas(dir, "by-category", "--month", "2024-03").stdout), [
    "home  €120.00",
    "food  €45.50",
    "(none)  €3.00",
    "transport  €3.00",
  ]);
});
