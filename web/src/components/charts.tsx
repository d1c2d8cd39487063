/** Small dependency-free SVG charts: React elements only, no inline styles, no HTML strings. */

export interface Bar {
  label: string;
  value: number;
  /** CSS class of the bar (colour by channel or priority). */
  tone?: string;
}

/** A horizontal bar chart, one bar per row. */
export function BarChart(props: {
  title: string;
  bars: Bar[];
  unit?: string;
  format?: (v: number) => string;
}) {
  const width = 420;
  const row = 18;
  const labelWidth = 150;
  const max = Math.max(1, ...props.bars.map((b) => b.value));
  const format = props.format ?? ((v: number) => `${Math.round(v)}${props.unit ?? ''}`);
  return (
    <svg
      className="chart"
      viewBox={`0 0 ${width} ${props.bars.length * row + 4}`}
      role="img"
      aria-label={props.title}
    >
      <title>{props.title}</title>
      {props.bars.map((bar, i) => {
        const w = ((width - labelWidth - 70) * bar.value) / max;
        return (
          <g key={bar.label} transform={`translate(0, ${i * row + 2})`}>
            <text x={0} y={13} className="chart-label">
              {bar.label}
            </text>
            <rect
              x={labelWidth}
              y={2}
              width={Math.max(w, bar.value > 0 ? 2 : 0)}
              height={14}
              className={bar.tone ?? 'tone-a'}
            />
            <text x={labelWidth + w + 6} y={13} className="chart-value">
              {format(bar.value)}
            </text>
          </g>
        );
      })}
    </svg>
  );
}

export interface Series {
  name: string;
  tone: string;
  points: number[];
}

/** A line chart over the last N samples (one sample per poll). */
export function LineChart(props: { title: string; series: Series[]; unit: string }) {
  const width = 420;
  const height = 130;
  const n = Math.max(2, ...props.series.map((s) => s.points.length));
  const max = Math.max(1, ...props.series.flatMap((s) => s.points));
  const x = (i: number) => 30 + (i * (width - 40)) / (n - 1);
  const y = (v: number) => height - 20 - (v * (height - 40)) / max;
  return (
    <svg className="chart" viewBox={`0 0 ${width} ${height}`} role="img" aria-label={props.title}>
      <title>{props.title}</title>
      <line x1={30} y1={height - 20} x2={width - 10} y2={height - 20} className="axis" />
      <text x={0} y={14} className="chart-value">
        {max.toFixed(max < 10 ? 1 : 0)}
        {props.unit}
      </text>
      <text x={0} y={height - 22} className="chart-value">
        0
      </text>
      {props.series.map((s) => (
        <polyline
          key={s.name}
          className={`line ${s.tone}`}
          points={s.points.map((v, i) => `${x(i)},${y(v)}`).join(' ')}
        />
      ))}
      {props.series.map((s, i) => (
        <text key={s.name} x={40 + i * 110} y={height - 4} className={`legend ${s.tone}-text`}>
          {s.name}
        </text>
      ))}
    </svg>
  );
}
