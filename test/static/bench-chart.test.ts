import { describe, expect, it } from 'vitest';
import {
  type Box,
  type ChartSummary,
  latencySvg,
  layoutLatencyChart,
} from '../../bench/lib/latency-chart.mjs';

/**
 * The bench chart's labels never overlap a bar or each other, whatever the figures: the layout is
 * checked on the box every text takes, for figures where the floor sits at the cold bars' height
 * (where its label used to cover them) and for a range of other shapes.
 */

function overlaps(a: Box, b: Box): boolean {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

function summaryWith(
  floor: number,
  medians: { inProcess: number; warm: number; cold: number },
): ChartSummary {
  const latency: ChartSummary['latency'] = {};
  for (const group of ['readFile', 'getMetadata', 'writeFile']) {
    latency[`${group} in-process`] = { median: medians.inProcess, p90: medians.inProcess * 1.4 };
    latency[`${group} warm`] = { median: medians.warm, p90: medians.warm * 1.4 };
    latency[`${group} cold`] = { median: medians.cold, p90: medians.cold * 1.15 };
  }
  return { floor, latency };
}

const SHAPES: [string, ChartSummary][] = [
  ['the last run (floor at the cold bars)', summaryWith(55.8, { inProcess: 1.16, warm: 5.52, cold: 68 })],
  ['cold equal to the floor', summaryWith(60, { inProcess: 1, warm: 5, cold: 60 })],
  ['a slow machine', summaryWith(240, { inProcess: 9, warm: 40, cold: 310 })],
  ['everything tiny', summaryWith(2, { inProcess: 0.1, warm: 0.3, cold: 2.2 })],
];

describe('the bench latency chart', () => {
  it.each(SHAPES)('keeps every label clear of the bars and of every other label: %s', (_name, summary) => {
    const chart = layoutLatencyChart(summary);
    const problems: string[] = [];
    chart.texts.forEach((text, i) => {
      for (const bar of chart.bars)
        if (overlaps(text.box, bar)) problems.push(`"${text.value}" covers a bar`);
      for (const other of chart.texts.slice(i + 1)) {
        if (overlaps(text.box, other.box)) problems.push(`"${text.value}" covers "${other.value}"`);
      }
      const inside =
        text.box.x >= 0 &&
        text.box.y >= 0 &&
        text.box.x + text.box.w <= chart.width &&
        text.box.y + text.box.h <= chart.height;
      if (!inside) problems.push(`"${text.value}" leaves the chart`);
    });
    expect(problems).toEqual([]);
  });

  it('catches a label laid over a bar (the check itself)', () => {
    const bar = { x: 10, y: 10, w: 40, h: 100 };
    expect(overlaps({ x: 30, y: 50, w: 80, h: 15 }, bar)).toBe(true);
    expect(overlaps({ x: 60, y: 50, w: 80, h: 15 }, bar)).toBe(false);
  });

  it('renders every laid-out label into the SVG', () => {
    const summary = SHAPES[0]?.[1] as ChartSummary;
    const svg = latencySvg(summary);
    for (const text of layoutLatencyChart(summary).texts) expect(svg).toContain(`>${text.value}</text>`);
  });
});
