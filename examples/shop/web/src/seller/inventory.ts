// Seller stock tools: adjust one SKU, or upload a CSV of counts.

import { api } from "../api/client";

export interface StockRow {
  sku: string;
  onHand: number;
}

export function parseStockCsv(text: string): StockRow[] {
  const [header, ...lines] = text.trim().split(/\r?\n/);
  const columns = header.split(",").map((c) => c.trim().toLowerCase());
  const skuAt = columns.indexOf("sku");
  const countAt = columns.indexOf("on_hand");
  if (skuAt < 0 || countAt < 0) throw new Error("The file needs sku and on_hand columns.");
  return lines.map((line, i) => {
    const cells = line.split(",");
    const onHand = Number(cells[countAt]);
    if (!Number.isInteger(onHand) || onHand < 0) throw new Error(`Row ${i + 2}: on_hand must be a whole number.`);
    return { sku: cells[skuAt].trim(), onHand };
  });
}

export async function uploadStockCsv(text: string): Promise<number> {
  parseStockCsv(text); // fail fast in the browser with a row number
  const result = await api.post<{ updated: number }>("/seller/inventory/import", { csv: text });
  return result.updated;
}

export async function adjustStock(sku: string, delta: number, reason: string): Promise<StockRow> {
  return api.post<StockRow>(`/seller/inventory/${sku}/adjust`, { delta, reason });
}
