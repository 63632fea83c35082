import assert from "node:assert/strict";
import { test } from "node:test";
import { cuentas, lines, seed, workspace } from "./harness.ts";

test("step 25: delete an expense by day and description", () => {
  const dir = workspace();
  seed(dir, [
    { date: "2024-03-05", cents: 180, description: "Café con leche" },
    { date: "2024-03-05", cents: 200, description: "Café con leche y tostada" },
    { date: "2024-03-06", cents: 180, description: "Café con leche" },
    { date: "2024-03-05", cents: 120, description: "Pan" },
  ]);
  const deleted = cuentas(dir, "delete", "5/3/2024", "cafe", "con", "LECHE");
  assert.equal(deleted.code, 0, deleted.stderr);
  assert.match(deleted.stdout, /Deleted 1 expense/);
  assert.deepEqual(lines(cuentas(dir, "list").stdout), [
    "2024-03-05  €2.00  Café con leche y tostada",
    "2024-03-05  €1.20  Pan",
    "2024-03-06  €1.80  Café con leche",
  ]);
  const nothing = cuentas(dir, "delete", "2024-03-07", "Pan");
  assert.equal(nothing.code, 1);
  assert.equal(lines(cuentas(dir, "list").stdout).length, 3);
  const badDate = cuentas(dir, "delete", "2024-02-30", "Pan");
  assert.equal(badDate.code, 1);
  assert.match(badDate.stderr, /2024-02-30/);
});
