import assert from "node:assert/strict";
import { test } from "node:test";
import { cuentas, lines, workspace } from "./harness.ts";

test("step 01: expenses carry a category given with --category", () => {
  const dir = workspace();
  assert.equal(cuentas(dir, "add", "2024-03-05", "12.50", "Groceries", "--category", "food").code, 0);
  assert.equal(cuentas(dir, "add", "--category=home", "2024-03-02", "40", "Electricity", "bill").code, 0);
  assert.equal(cuentas(dir, "add", "2024-03-09", "2.20", "Coffee").code, 0);
  assert.deepEqual(lines(cuentas(dir, "list").stdout), [
    "2024-03-02  €40.00  Electricity bill [home]",
    "2024-03-05  €12.50  Groceries [food]",
    "2024-03-09  €2.20  Coffee",
  ]);
});

test("step 01: a missing value or an unknown option is refused", () => {
  const dir = workspace();
  const missing = cuentas(dir, "add", "2024-03-05", "1.00", "Tea", "--category");
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /--category/);
  const unknown = cuentas(dir, "add", "2024-03-05", "1.00", "Tea", "--colour", "red");
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /--colour/);
  assert.deepEqual(lines(cuentas(dir, "list").stdout), []);
});
