import { ms } from './format.mjs';

/**
 * The latency chart as boxes first, then SVG: every text gets the box its characters take (an
 * upper estimate of a sans-serif face), and every label sits where no bar or other label can be.
 * The floor line's label lives in a margin right of the plot, the legend in its own row below the
 * group names, so nothing depends on where the bars happen to end.
 */

const FONT = 12;
/** Average advance of sans-serif glyphs as a share of the font size, rounded up. */
const GLYPH = 0.62;

export function textBox(text, x, y, { size = FONT, anchor = 'start' } = {}) {
  const w = text.length * size * GLYPH;
  const left = anchor === 'middle' ? x - w / 2 : anchor === 'end' ? x - w : x;
  return { x: left, y: y - size, w, h: size * 1.25 };
}

export function layoutLatencyChart(summary) {
  const left = 60;
  const top = 48;
  const plotHeight = 300;
  const plotRight = 620;
  const margin = 210;
  const width = plotRight + margin;
  const groups = ['readFile', 'getMetadata', 'writeFile'];
  const modes = [
    ['in-process', '#7fb069', 'in-process'],
    ['warm', '#4e79a7', 'sandboxed, warm pool'],
    ['cold', '#e15759', 'sandboxed, cold'],
  ];
  const maxValue = Math.max(
    summary.floor * 1.25,
    ...groups.flatMap((group) => modes.map(([mode]) => summary.latency[`${group} ${mode}`].p90)),
  );
  // Headroom for the value label above the tallest whisker.
  const y = (value) => Math.round((top + plotHeight - (value / maxValue) * (plotHeight - 20)) * 10) / 10;
  const groupWidth = (plotRight - left) / groups.length;
  const barWidth = 46;
  const gap = 10;
  const texts = [];
  const bars = [];
  const lines = [];
  const text = (value, x, yy, options = {}) =>
    texts.push({ value, x, y: yy, ...options, box: textBox(value, x, yy, options) });

  text('fs-sandbox: 1 KiB operation latency (median bar, p90 whisker)', left, 24, {
    size: 15,
    weight: 'bold',
  });
  const step = maxValue > 100 ? 20 : 10;
  for (let tick = 0; tick <= maxValue; tick += step) {
    lines.push({ x1: left, x2: plotRight, y1: y(tick), y2: y(tick), stroke: '#e5e5e5' });
    text(String(tick), left - 8, y(tick) + 4, { anchor: 'end' });
  }
  groups.forEach((group, g) => {
    const x0 = left + g * groupWidth + (groupWidth - modes.length * barWidth - (modes.length - 1) * gap) / 2;
    modes.forEach(([mode, color], m) => {
      const stats = summary.latency[`${group} ${mode}`];
      const x = x0 + m * (barWidth + gap);
      const center = x + barWidth / 2;
      bars.push({ x, y: y(stats.median), w: barWidth, h: y(0) - y(stats.median), fill: color });
      lines.push({ x1: center, x2: center, y1: y(stats.median), y2: y(stats.p90), stroke: '#333' });
      lines.push({ x1: center - 6, x2: center + 6, y1: y(stats.p90), y2: y(stats.p90), stroke: '#333' });
      text(ms(stats.median), center, y(stats.p90) - 5, { anchor: 'middle' });
    });
    text(`fs/${group}`, left + g * groupWidth + groupWidth / 2, top + plotHeight + 20, {
      anchor: 'middle',
      weight: 'bold',
    });
  });
  lines.push({
    x1: left,
    x2: plotRight,
    y1: y(summary.floor),
    y2: y(summary.floor),
    stroke: '#555',
    dash: '6 4',
  });
  text(`floor ${ms(summary.floor)} ms`, plotRight + 8, y(summary.floor) + 4);
  text('(bwrap + node, empty script)', plotRight + 8, y(summary.floor) + 20, { size: 11 });
  const legendY = top + plotHeight + 52;
  modes.forEach(([, color, label], m) => {
    const x = left + m * 190;
    bars.push({ x, y: legendY - 12, w: 14, h: 14, fill: color });
    text(label, x + 20, legendY);
  });
  return { width, height: legendY + 20, texts, bars, lines };
}

export function latencySvg(summary) {
  const chart = layoutLatencyChart(summary);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${chart.width}" height="${chart.height}" font-family="sans-serif" font-size="${FONT}">`,
    `<rect width="${chart.width}" height="${chart.height}" fill="white"/>`,
  ];
  for (const line of chart.lines) {
    const dash = line.dash ? ` stroke-dasharray="${line.dash}"` : '';
    parts.push(
      `<line x1="${line.x1}" x2="${line.x2}" y1="${line.y1}" y2="${line.y2}" stroke="${line.stroke}"${dash}/>`,
    );
  }
  for (const bar of chart.bars) {
    parts.push(`<rect x="${bar.x}" y="${bar.y}" width="${bar.w}" height="${bar.h}" fill="${bar.fill}"/>`);
  }
  for (const label of chart.texts) {
    const anchor = label.anchor && label.anchor !== 'start' ? ` text-anchor="${label.anchor}"` : '';
    const size = label.size ? ` font-size="${label.size}"` : '';
    const weight = label.weight ? ` font-weight="${label.weight}"` : '';
    parts.push(`<text x="${label.x}" y="${label.y}"${anchor}${size}${weight}>${label.value}</text>`);
  }
  parts.push(
    `<text x="16" y="${48 + 150}" transform="rotate(-90 16 ${48 + 150})" text-anchor="middle">ms</text>`,
    '</svg>',
  );
  return `${parts.join('\n')}\n`;
}
