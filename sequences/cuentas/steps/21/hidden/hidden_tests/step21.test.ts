import assert from "node:assert/strict";
import { test } from "node:test";
import { cuentas, lines, seed, workspace } from "./harness.ts";

test("step 21: by-week shows every week of the period", () => {
  const dir = workspace();
  seed(dir, [
    { date: "2024-01-03", cents: 100, description: "Bread" },
    { date: "2023-12-26", cents: 900, description: "Before" },
    { date: "2024-01-09", cents: 250, description: "Milk" },
    { date: "2024-01-10", cents: 700, description: "After" },
  ]);
  assert.deepEqual(lines(cuentas(dir, "by-week", "--from", "2023-12-27", "--to", "2024-01-09").stdout), [
    "2023-W52  €0.00",
    "2024-W01  €1.00",
    "2024-W02  €2.50",
  ]);
  assert.deepEqual(lines(cuentas(dir, "by-week", "--from", "2020-12-20", "--to=2021-01-10").stdout), [
    "2020-W51  €0.00",
    "2020-W52  €0.00",
    "2020-W53  €0.00",
    "2021-W01  €0.00",
  ]);
  assert.deepEqual(lines(cuentas(dir, "by-week", "--from", "2024-01-01").stdout), ["2024-W01  €1.00", "2024-W02  €9.50"]);
});
