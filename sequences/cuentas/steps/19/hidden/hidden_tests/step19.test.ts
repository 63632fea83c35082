import assert from "node:assert/strict";
import { test } from "node:test";
import { cuentas, lines, seed, workspace } from "./harness.ts";

test("step 19: sorted lists", () => {
  const dir = workspace();
  seed(dir, [
    { date: "2024-03-05", cents: 300, description: "Zumo" },
    { date: "2024-03-01", cents: 1200, description: "árbol" },
    { date: "2024-03-04", cents: 300, description: "Agua" },
    { date: "2024-03-02", cents: 50, description: "Éclair" },
    { date: "2024-03-03", cents: 9900, description: "eclair box" },
    { date: "2024-03-06", cents: 200, description: "Bus" },
  ]);
  assert.deepEqual(lines(cuentas(dir, "list", "--sort", "description").stdout), [
    "2024-03-04  €3.00  Agua",
    "2024-03-01  €12.00  árbol",
    "2024-03-06  €2.00  Bus",
    "2024-03-02  €0.50  Éclair",
    "2024-03-03  €99.00  eclair box",
    "2024-03-05  €3.00  Zumo",
  ]);
  assert.deepEqual(lines(cuentas(dir, "list", "--sort=amount", "--to", "2024-03-05").stdout), [
    "2024-03-03  €99.00  eclair box",
    "2024-03-01  €12.00  árbol",
    "2024-03-04  €3.00  Agua",
    "2024-03-05  €3.00  Zumo",
    "2024-03-02  €0.50  Éclair",
  ]);
  assert.deepEqual(lines(cuentas(dir, "search", "ECLAIR", "--sort", "amount").stdout), [
    "2024-03-03  €99.00  eclair box",
    "2024-03-02  €0.50  Éclair",
  ]);
  const bad = cuentas(dir, "list", "--sort", "colour");
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /colour/);
});
