import assert from "node:assert/strict";
import { test } from "node:test";
import { cuentas, lines, seed, workspace } from "./harness.ts";

test("step 17: select an ISO week", () => {
  const dir = workspace();
  seed(dir, [
    { date: "2024-03-04", cents: 1000, description: "Monday" },
    { date: "2024-03-03", cents: 300, description: "Sunday before" },
    { date: "2024-03-10", cents: 1300, description: "Sunday after" },
    { date: "2024-12-30", cents: 500, description: "Year end" },
    { date: "2025-01-05", cents: 250, description: "New year" },
    { date: "2021-01-01", cents: 700, description: "Old" },
  ]);
  assert.deepEqual(lines(cuentas(dir, "list", "--week", "2024-W10").stdout), [
    "2024-03-04  €10.00  Monday",
    "2024-03-10  €13.00  Sunday after",
  ]);
  assert.equal(cuentas(dir, "total", "--week=2025-W01").stdout.trim(), "Total: €7.50");
  assert.equal(cuentas(dir, "total", "--week", "2020-W53").stdout.trim(), "Total: €7.00");
  for (const bad of ["2024-W53", "2024-W00"]) {
    const refused = cuentas(dir, "total", "--week", bad);
    assert.equal(refused.code, 1);
    assert.ok(refused.stderr.includes(bad), refused.stderr);
  }
});
