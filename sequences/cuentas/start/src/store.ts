import { existsSync, readFileSync, writeFileSync } from "node:fs";

// One recorded expense. Amounts are kept in integer cents so that sums are exact.
export interface Expense {
  date: string;
  cents: number;
  description: string;
}

// The data file is named by CUENTAS_FILE, or is cuentas.json in the current folder.
export function dataFile(): string {
  return process.env.CUENTAS_FILE ?? "cuentas.json";
}

export function loadExpenses(): Expense[] {
  const file = dataFile();
  if (!existsSync(file)) {
    return [];
  }
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new Error(`cannot read ${file}: ${(error as Error).message}`);
  }
  if (!Array.isArray(data)) {
    throw new Error(`${file} does not hold a list of expenses`);
  }
  return data as Expense[];
}

export function saveExpenses(expenses: Expense[]): void {
  writeFileSync(dataFile(), JSON.stringify(expenses, null, 2) + "\n");
}
