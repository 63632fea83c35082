import assert from "node:assert/strict";
import { test } from "node:test";
import { cuentas, workspace } from "./harness.ts";

test("step 30: a month's summary", () => {
  const dir = workspace();
  for (const [date, amount, what, category] of [
    ["2024-03-01", "1.200", "Rent", "home"],
    ["2024-03-05", "50", "Market", "food"],
    ["2024-03-07", "37,50", "Bakery", "Food"],
    ["2024-02-29", "900", "February", "home"],
    ["2024-04-01", "900", "April", "home"],
  ]) {
    assert.equal(cuentas(dir, "add", date, amount, what, "--category", category).code, 0);
  }
  assert.equal(cuentas(dir, "add", "2024-03-31", "1.200", "Same as rent").code, 0);
  assert.equal(
    cuentas(dir, "summary", "marzo", "2024").stdout.trim(),
    [
      "March 2024",
      "Total: €2,487.50",
      "Biggest: 2024-03-01  €1,200.00  Rent [home]",
      "By category:",
      "  (none)  €1,200.00",
      "  home  €1,200.00",
      "  food  €87.50",
      "By week:",
      "  2024-W09  €1,200.00",
      "  2024-W10  €87.50",
      "  2024-W11  €0.00",
      "  2024-W12  €0.00",
      "  2024-W13  €1,200.00",
    ].join("\n"),
  );
  assert.equal(
    cuentas(dir, "summary", "2025-02", "--currency", "GBP").stdout.trim(),
    ["February 2025", "Total: £0.00", "Biggest: none", "By category:", "By week:", "  2025-W05  £0.00", "  2025-W06  £0.00", "  2025-W07  £0.00", "  2025-W08  £0.00", "  2025-W09  £0.00"].join("\n"),
  );
});
