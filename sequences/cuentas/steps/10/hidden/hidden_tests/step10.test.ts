import assert from "node:assert/strict";
import { test } from "node:test";
import { cuentas, lines, workspace } from "./harness.ts";

test("step 10: thousands separators in and out", () => {
  const dir = workspace();
  assert.equal(cuentas(dir, "add", "2024-03-10", "1.234,56", "Sofa").code, 0);
  assert.equal(cuentas(dir, "add", "2024-03-11", "1,234.56", "Table").code, 0);
  assert.equal(cuentas(dir, "add", "2024-03-12", "2.000", "Piano").code, 0);
  assert.equal(cuentas(dir, "add", "2024-04-12", "1234,5", "Bike").code, 0);
  for (const bad of ["1.234.56", "1.23.456", "12,345,6"]) {
    const refused = cuentas(dir, "add", "2024-03-13", bad, "Nothing");
    assert.equal(refused.code, 1, bad);
    assert.ok(refused.stderr.includes(bad), refused.stderr);
  }
  assert.deepEqual(lines(cuentas(dir, "list").stdout), [
    "2024-03-10  €1,234.56  Sofa",
    "2024-03-11  €1,234.56  Table",
    "2024-03-12  €2,000.00  Piano",
    "2024-04-12  €1,234.50  Bike",
  ]);
  assert.equal(cuentas(dir, "total").stdout.trim(), "Total: €5,703.62");
  assert.deepEqual(lines(cuentas(dir, "by-month").stdout), ["2024-03  €4,469.12", "2024-04  €1,234.50"]);
});
