import { type Expense, loadExpenses, saveExpenses } from "./store.ts";

export function describe(expense: Expense): string {
  const amount = `€${(expense.cents / 100).toFixed(2)}`;
  return `${expense.date}  ${amount}  ${expense.description}`;
}

export function add(args: string[]): string {
  const [date, amount, ...words] = args;
  if (date === undefined || amount === undefined || words.length === 0) {
    throw new Error("usage: cuentas add <date> <amount> <description>");
  }
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) {
    throw new Error(`invalid date "${date}": write it as YYYY-MM-DD`);
  }
  if (!/^\d+(\.\d{1,2})?$/.test(amount)) {
    throw new Error(`invalid amount "${amount}": write it like 12.50`);
  }
  const description = words.join(" ");
  const expense: Expense = { date, cents: Math.round(Number(amount) * 100), description };
  const expenses = loadExpenses();
  expenses.push(expense);
  saveExpenses(expenses);
  return `Added: ${describe(expense)}`;
}

// Expenses are listed by date; expenses of the same day keep the order they were added in.
export function list(args: string[]): string {
  if (args.length > 0) {
    throw new Error(`list takes no arguments, got "${args[0]}"`);
  }
  const expenses = loadExpenses().sort((a, b) => a.date.localeCompare(b.date));
  return expenses.map(describe).join("\n");
}
