// Bar charts as inline SVG with HTML labels, for a source's usage and the live view.

import { h, s } from './dom.js';

/**
 * An inline SVG bar chart that stretches to its box (CSS sets the height); its labels are
 * HTML around it, so they keep their size on any screen. Each bar tells its label and value
 * to pointers and screen readers. With more `slots` than points, the points fill the
 * right-hand end (the latest at the edge).
 */
export function barChart(points, title, unit, { labels = true, slots = points.length } = {}) {
  const width = 1000;
  const height = 100;
  const max = Math.max(0, ...points.map((p) => p.value));
  const first = Math.max(0, slots - points.length);
  const slot = width / Math.max(1, slots, points.length);
  const svg = s('svg', {
    viewBox: `0 0 ${width} ${height}`,
    preserveAspectRatio: 'none',
    class: 'chart',
    role: 'img',
    'aria-label': `${title}; highest ${max.toLocaleString('en')} ${unit}`,
  });
  svg.append(s('title', {}, title));
  points.forEach((p, i) => {
    const barHeight = max === 0 ? 0 : Math.max(p.value > 0 ? 1 : 0, (height * p.value) / max);
    svg.append(
      s(
        'rect',
        {
          x: ((first + i) * slot + slot * 0.1).toFixed(1),
          y: (height - barHeight).toFixed(1),
          width: (slot * 0.8).toFixed(1),
          height: barHeight.toFixed(1),
          class: 'bar',
        },
        s('title', {}, `${p.label}: ${p.value.toLocaleString('en')} ${unit}`),
      ),
    );
  });
  if (!labels) return h('figure', { class: 'chart-box' }, svg);
  return h(
    'figure',
    { class: 'chart-box' },
    h('figcaption', { class: 'chart-max muted small' }, `${max.toLocaleString('en')} ${unit}`),
    svg,
    points.length
      ? h(
          'div',
          { class: 'chart-axis muted small', 'aria-hidden': 'true' },
          h('span', {}, points[0].label),
          h('span', {}, points.at(-1).label),
        )
      : null,
  );
}
