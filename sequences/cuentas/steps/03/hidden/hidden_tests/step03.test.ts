import assert from "node:assert/strict";
import { test } from "node:test";
import { cuentas, lines, seed, workspace } from "./harness.ts";

test("step 03: list a period and refuse impossible dates", () => {
  const dir = workspace();
  seed(dir, [
    { date: "2024-03-16", cents: 400, description: "Cinema" },
    { date: "2024-02-29", cents: 100, description: "Bread" },
    { date: "2024-03-01", cents: 250, description: "Milk" },
    { date: "2024-03-15", cents: 1000, description: "Shoes" },
  ]);
  assert.deepEqual(lines(cuentas(dir, "list", "--from", "2024-03-01", "--to", "2024-03-15").stdout), [
    "2024-03-01  €2.50  Milk",
    "2024-03-15  €10.00  Shoes",
  ]);
  assert.deepEqual(lines(cuentas(dir, "list", "--from=2024-03-15").stdout), [
    "2024-03-15  €10.00  Shoes",
    "2024-03-16  €4.00  Cinema",
  ]);
  assert.deepEqual(lines(cuentas(dir, "list", "--to", "2024-02-29").stdout), ["2024-02-29  €1.00  Bread"]);
  const impossible = cuentas(dir, "add", "2024-02-30", "1", "Tea");
  assert.equal(impossible.code, 1);
  assert.match(impossible.stderr, /2024-02-30/);
  const notLeap = cuentas(dir, "list", "--from", "2023-02-29");
  assert.equal(notLeap.code, 1);
  assert.match(notLeap.stderr, /2023-02-29/);
  assert.equal(lines(cuentas(dir, "list").stdout).length, 4);
});
