/** Milliseconds as the report prints them: three significant digits, whole above 100. */
export const ms = (value) =>
  value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);
