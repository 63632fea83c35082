import assert from "node:assert/strict";
import { test } from "node:test";
import { cuentas, lines, seed, workspace } from "./harness.ts";

test("step 26: compare two months", () => {
  const dir = workspace();
  seed(dir, [{ date: "2024-03-02", cents: 300, description: "Tip" }]);
  for (const [date, amount, what, category] of [
    ["2024-02-05", "40", "Market", "Food"],
    ["2024-02-01", "500", "Rent", "home"],
    ["2024-03-05", "50", "Market", "food"],
    ["2024-03-06", "5", "Bakery", "FOOD"],
    ["2024-03-07", "20", "Cinema", "Ócio"],
    ["2024-02-10", "7", "Bus", "transport"],
    ["2024-03-10", "7", "Bus", "transport"],
    ["2024-04-01", "999", "Later", "ocio"],
  ]) {
    assert.equal(cuentas(dir, "add", date, amount, what, "--category", category).code, 0);
  }
  assert.deepEqual(lines(cuentas(dir, "compare", "2024-02", "March 2024").stdout), [
    "(none)  €0.00  €3.00  +€3.00",
    "Food  €40.00  €55.00  +€15.00",
    "home  €500.00  €0.00  -€500.00",
    "Ócio  €0.00  €20.00  +€20.00",
    "transport  €7.00  €7.00  €0.00",
    "Total  €547.00  €85.00  -€462.00",
  ]);
  const bad = cuentas(dir, "compare", "2024-02", "2024-13");
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /2024-13/);
});
