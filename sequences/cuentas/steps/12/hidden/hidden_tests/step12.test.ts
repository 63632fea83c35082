import assert from "node:assert/strict";
import { test } from "node:test";
import { cuentas, lines, workspace } from "./harness.ts";

test("step 12: categories ignore capitals and accents", () => {
  const dir = workspace();
  for (const [date, amount, what, category] of [
    ["2024-03-05", "20", "Mercado", "Alimentación"],
    ["2024-03-02", "5", "Pan", "alimentacion"],
    ["2024-03-07", "2,50", "Leche", "ALIMENTACION"],
    ["2024-03-08", "26", "Luz", "Casa"],
  ]) {
    assert.equal(cuentas(dir, "add", date, amount, what, "--category", category).code, 0);
  }
  assert.deepEqual(lines(cuentas(dir, "by-category").stdout), ["Alimentación  €27.50", "Casa  €26.00"]);
  assert.equal(cuentas(dir, "total", "--category", "alimentación").stdout.trim(), "Total: €27.50");
  assert.deepEqual(lines(cuentas(dir, "list", "--category=CASA").stdout), ["2024-03-08  €26.00  Luz [Casa]"]);
});
