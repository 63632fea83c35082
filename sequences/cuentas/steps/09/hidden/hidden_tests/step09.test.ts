import assert from "node:assert/strict";
import { test } from "node:test";
import { cuentas, lines, workspace } from "./harness.ts";

test("step 09: dates written by hand", () => {
  const dir = workspace();
  assert.equal(cuentas(dir, "add", "5/3/2024", "1", "Bread").code, 0);
  assert.equal(cuentas(dir, "add", "2024-3-9", "2", "Milk").code, 0);
  assert.equal(cuentas(dir, "add", "2024/03/12", "3", "Eggs").code, 0);
  assert.equal(cuentas(dir, "add", "01/04/2024", "4", "Fish").code, 0);
  const impossible = cuentas(dir, "add", "31/04/2024", "5", "Nothing");
  assert.equal(impossible.code, 1);
  assert.match(impossible.stderr, /31\/04\/2024/);
  assert.deepEqual(lines(cuentas(dir, "list", "--from", "9/3/2024", "--to=2024/4/1").stdout), [
    "2024-03-09  €2.00  Milk",
    "2024-03-12  €3.00  Eggs",
    "2024-04-01  €4.00  Fish",
  ]);
  assert.equal(lines(cuentas(dir, "list", "--to", "05/03/2024").stdout)[0], "2024-03-05  €1.00  Bread");
});
