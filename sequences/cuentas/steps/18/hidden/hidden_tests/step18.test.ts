import assert from "node:assert/strict";
import { test } from "node:test";
import { cuentas, lines, workspace } from "./harness.ts";

test("step 18: budgets per category", () => {
  const dir = workspace();
  for (const [date, amount, what, category] of [
    ["2024-03-05", "20", "Market", "food"],
    ["2024-03-07", "25,50", "Bakery", "Food"],
    ["2024-03-08", "72", "Concert", "Ocio"],
    ["2024-04-01", "999", "Party", "ocio"],
  ]) {
    assert.equal(cuentas(dir, "add", date, amount, what, "--category", category).code, 0);
  }
  assert.deepEqual(lines(cuentas(dir, "budget", "--month", "2024-03", "food=200", "ócio=60", "home=1.200,5").stdout), [
    "food  €45.50 of €200.00, €154.50 left",
    "ócio  €72.00 of €60.00, €12.00 over",
    "home  €0.00 of €1,200.50, €1,200.50 left",
  ]);
  assert.deepEqual(lines(cuentas(dir, "budget", "food=45,50", "--week", "2024-W10").stdout), [
    "food  €45.50 of €45.50, €0.00 left",
  ]);
  for (const [bad, shown] of [["food", "food"], ["food=lots", "lots"]]) {
    const refused = cuentas(dir, "budget", bad);
    assert.equal(refused.code, 1);
    assert.ok(refused.stderr.includes(shown), refused.stderr);
  }
});
