import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { cuentas, lines, workspace } from "./harness.ts";

test("step 23: refunds are negative amounts", () => {
  const dir = workspace();
  assert.equal(cuentas(dir, "add", "2024-03-01", "59,99", "Shoes", "--category", "clothes").code, 0);
  assert.equal(cuentas(dir, "add", "2024-03-08", "-19,99", "Returned shoes", "--category", "clothes").code, 0);
  assert.equal(cuentas(dir, "add", "2024-03-09", "-1.250", "Insurance refund").code, 0);
  assert.deepEqual(lines(cuentas(dir, "list").stdout), [
    "2024-03-01  €59.99  Shoes [clothes]",
    "2024-03-08  -€19.99  Returned shoes [clothes]",
    "2024-03-09  -€1,250.00  Insurance refund",
  ]);
  assert.equal(cuentas(dir, "total").stdout.trim(), "Total: -€1,210.00");
  assert.equal(cuentas(dir, "total", "--category", "clothes").stdout.trim(), "Total: €40.00");
  assert.deepEqual(lines(cuentas(dir, "budget", "clothes=30").stdout), ["clothes  €40.00 of €30.00, €10.00 over"]);
  assert.equal(cuentas(dir, "export", "out.csv", "--sep", ";").code, 0);
  const csv = readFileSync(join(dir, "out.csv"), "utf8");
  assert.ok(csv.includes("2024-03-08;-19,99;clothes;Returned shoes"), csv);
  const other = workspace();
  assert.equal(cuentas(other, "import", join(dir, "out.csv")).stdout.trim(), "Imported 3 expenses");
  assert.equal(cuentas(other, "total").stdout.trim(), "Total: -€1,210.00");
});
