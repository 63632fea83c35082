import assert from "node:assert/strict";
import { test } from "node:test";
import { cuentas, lines, seed, workspace } from "./harness.ts";

test("step 13: totals per ISO week", () => {
  const dir = workspace();
  seed(dir, [
    { date: "2024-03-04", cents: 1000, description: "Monday" },
    { date: "2024-03-03", cents: 300, description: "Sunday before" },
    { date: "2024-03-10", cents: 1300, description: "Sunday after" },
    { date: "2024-12-30", cents: 500, description: "Year end" },
    { date: "2021-01-03", cents: 700, description: "New year" },
    { date: "2026-01-01", cents: 200, description: "Thursday" },
  ]);
  assert.deepEqual(lines(cuentas(dir, "by-week").stdout), [
    "2020-W53  €7.00",
    "2024-W09  €3.00",
    "2024-W10  €23.00",
    "2025-W01  €5.00",
    "2026-W01  €2.00",
  ]);
  assert.deepEqual(lines(cuentas(dir, "by-week", "--month", "2024-03").stdout), ["2024-W09  €3.00", "2024-W10  €23.00"]);
});
