/** A byte count in words for messages: "536870912 bytes (512 MiB)". */
export function sizeText(bytes: number): string {
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = '';
  for (const next of units) {
    if (value < 1024) break;
    value /= 1024;
    unit = next;
  }
  if (unit === '') return `${bytes} bytes`;
  const rounded = Number.isInteger(value) ? String(value) : value.toFixed(1);
  return `${bytes} bytes (${rounded} ${unit})`;
}
