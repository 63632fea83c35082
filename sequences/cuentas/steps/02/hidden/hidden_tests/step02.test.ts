import assert from "node:assert/strict";
import { test } from "node:test";
import { cuentas, lines, workspace } from "./harness.ts";

test("step 02: amounts may use a decimal comma", () => {
  const dir = workspace();
  assert.equal(cuentas(dir, "add", "2024-03-05", "12,50", "Groceries").code, 0);
  assert.equal(cuentas(dir, "add", "2024-03-06", "0,5", "Gum").code, 0);
  const bad = cuentas(dir, "add", "2024-03-07", "12,5a", "Nothing");
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /12,5a/);
  assert.deepEqual(lines(cuentas(dir, "list").stdout), [
    "2024-03-05  €12.50  Groceries",
    "2024-03-06  €0.50  Gum",
  ]);
});
