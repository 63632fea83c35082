import assert from "node:assert/strict";
import { test } from "node:test";
import { cuentas, lines, seed, workspace } from "./harness.ts";

test("step 20: by-month shows every month of the period", () => {
  const dir = workspace();
  seed(dir, [
    { date: "2024-01-05", cents: 100, description: "Bread" },
    { date: "2024-04-30", cents: 200, description: "Milk" },
    { date: "2023-10-30", cents: 900, description: "Before" },
  ]);
  assert.deepEqual(lines(cuentas(dir, "by-month", "--from", "2023-11-15", "--to", "2024-05-01").stdout), [
    "2023-11  €0.00",
    "2023-12  €0.00",
    "2024-01  €1.00",
    "2024-02  €0.00",
    "2024-03  €0.00",
    "2024-04  €2.00",
    "2024-05  €0.00",
  ]);
  assert.deepEqual(lines(cuentas(dir, "by-month", "--from=1/12/2023", "--to", "31/12/2023").stdout), ["2023-12  €0.00"]);
  assert.deepEqual(lines(cuentas(dir, "by-month").stdout), ["2023-10  €9.00", "2024-01  €1.00", "2024-04  €2.00"]);
});
