// Display helpers shared by every page.

const formatters = new Map<string, Intl.NumberFormat>();

export function formatMoney(cents: number, currency = "EUR", locale = navigator.language): string {
  const key = `${locale}:${currency}`;
  let formatter = formatters.get(key);
  if (!formatter) {
    formatter = new Intl.NumberFormat(locale, { style: "currency", currency });
    formatters.set(key, formatter);
  }
  return formatter.format(cents / 100);
}

export function formatDate(iso: string, locale = navigator.language): string {
  return new Date(iso).toLocaleDateString(locale, { year: "numeric", month: "short", day: "numeric" });
}

export function pluralize(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}
