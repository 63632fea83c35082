import assert from "node:assert/strict";
import { test } from "node:test";
import { cuentas, cuentasWith, lines, workspace } from "./harness.ts";

test("step 29: currency sign", () => {
  const dir = workspace();
  assert.equal(cuentas(dir, "add", "2024-07-01", "€12,50", "Tea").code, 0);
  assert.equal(cuentas(dir, "add", "2024-07-02", "1.234,5 €", "Rent").code, 0);
  assert.equal(cuentas(dir, "add", "2024-07-03", "-$4.20", "Refund").code, 0);
  assert.equal(cuentas(dir, "add", "2024-07-04", "£3", "Bus").code, 0);
  assert.deepEqual(lines(cuentas(dir, "list", "--currency", "GBP").stdout), [
    "2024-07-01  £12.50  Tea",
    "2024-07-02  £1,234.50  Rent",
    "2024-07-03  -£4.20  Refund",
    "2024-07-04  £3.00  Bus",
  ]);
  assert.equal(cuentas(dir, "--currency=usd", "total").stdout.trim(), "Total: $1,245.80");
  assert.equal(cuentas(dir, "total").stdout.trim(), "Total: €1,245.80");
  assert.equal(cuentasWith({ CUENTAS_CURRENCY: "GBP" }, dir, "total", "--month", "2024-07").stdout.trim(), "Total: £1,245.80");
  assert.equal(cuentasWith({ CUENTAS_CURRENCY: "GBP" }, dir, "total", "--currency", "EUR").stdout.trim(), "Total: €1,245.80");
  const bad = cuentas(dir, "total", "--currency", "XYZ");
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /XYZ/);
});
