import assert from "node:assert/strict";
import { test } from "node:test";
import { cuentas, seed, workspace } from "./harness.ts";

const csv = (text: string) => text.replaceAll("\r\n", "\n").trim();

test("step 28: reports as CSV", () => {
  const dir = workspace();
  seed(dir, [
    { date: "2024-02-29", cents: 100, description: "Bread" },
    { date: "2024-03-04", cents: 123456, description: "Sofa" },
  ]);
  assert.equal(cuentas(dir, "add", "2024-03-05", "20", "Wine", "--category", 'Food, "good" drinks').code, 0);
  assert.equal(csv(cuentas(dir, "by-month", "--format", "csv").stdout), "month,total\n2024-02,1.00\n2024-03,1254.56");
  assert.equal(
    csv(cuentas(dir, "by-week", "--format=csv", "--from", "2024-02-26", "--to", "2024-03-11").stdout),
    "week,total\n2024-W09,1.00\n2024-W10,1254.56\n2024-W11,0.00",
  );
  assert.equal(
    csv(cuentas(dir, "by-category", "--format", "csv").stdout),
    'category,total\n(none),1235.56\n"Food, ""good"" drinks",20.00',
  );
  assert.equal(cuentas(dir, "by-month", "--format", "text").stdout.trim(), "2024-02  €1.00\n2024-03  €1,254.56");
  const bad = cuentas(dir, "by-month", "--format", "xml");
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /xml/);
});
