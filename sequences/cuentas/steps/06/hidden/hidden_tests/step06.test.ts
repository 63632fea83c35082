import assert from "node:assert/strict";
import { test } from "node:test";
import { cuentas, lines, seed, workspace } from "./harness.ts";

test("step 06: totals per month", () => {
  const dir = workspace();
  seed(dir, [
    { date: "2024-03-31", cents: 1000, description: "Shoes" },
    { date: "2024-02-29", cents: 100, description: "Bread" },
    { date: "2023-12-15", cents: 700, description: "Lunch" },
    { date: "2024-03-01", cents: 250, description: "Milk" },
  ]);
  assert.equal(cuentas(dir, "add", "2024-03-05", "33", "Market", "--category", "food").code, 0);
  assert.deepEqual(lines(cuentas(dir, "by-month").stdout), [
    "2023-12  €7.00",
    "2024-02  €1.00",
    "2024-03  €45.50",
  ]);
  assert.deepEqual(lines(cuentas(dir, "by-month", "--category", "food").stdout), ["2024-03  €33.00"]);
  assert.deepEqual(lines(cuentas(dir, "by-month", "--from", "2024-01-01").stdout), [
    "2024-02  €1.00",
    "2024-03  €45.50",
  ]);
});
