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

/** A clock time for an axis label: hours and minutes, with seconds when asked (local time). */
export const clockTime = (at: number, seconds = false) =>
  new Date(at).toLocaleTimeString(undefined, {
    hour12: false,
    hour: '2-digit',
    minute: '2-digit',
    ...(seconds ? { second: '2-digit' } : {}),
  });

/** The x axis of a time chart: a line, `ticks` labelled times under it, and what it measures. */
function TimeAxis(props: {
  x0: number;
  x1: number;
  y: number;
  ticks: Array<{ x: number; label: string }>;
  caption: string;
}) {
  return (
    <g className="time-axis" aria-label={props.caption}>
      <line x1={props.x0} y1={props.y} x2={props.x1} y2={props.y} className="axis" />
      {props.ticks.map((t, i) => (
        <g key={`${t.label}-${t.x}`}>
          <line x1={t.x} y1={props.y} x2={t.x} y2={props.y + 4} className="axis" />
          <text
            x={t.x}
            y={props.y + 15}
            className="chart-label tick"
            textAnchor={i === 0 ? 'start' : i === props.ticks.length - 1 ? 'end' : 'middle'}
          >
            {t.label}
          </text>
        </g>
      ))}
      <text x={props.x1} y={props.y + 28} className="chart-label" textAnchor="end">
        {props.caption}
      </text>
    </g>
  );
}

/**
 * A line chart over the last N samples (one sample per poll), placed by their times (`times`,
 * ms, one per point) on a labelled time axis.
 */
export function LineChart(props: { title: string; series: Series[]; times: number[]; unit: string }) {
  const width = 420;
  const height = 160;
  const left = 30;
  const right = width - 10;
  const base = height - 50;
  const first = props.times[0] ?? 0;
  const last = props.times.at(-1) ?? first;
  const range = Math.max(1, last - first);
  const max = Math.max(1, ...props.series.flatMap((s) => s.points));
  const x = (at: number) => left + ((at - first) * (right - left)) / range;
  const y = (v: number) => base - (v * (base - 20)) / max;
  const ticks =
    props.times.length < 2
      ? []
      : [first, first + range / 2, last].map((at) => ({ x: x(at), label: clockTime(at, true) }));
  return (
    <svg className="chart" viewBox={`0 0 ${width} ${height}`} role="img" aria-label={props.title}>
      <title>{props.title}</title>
      <text x={0} y={14} className="chart-value">
        {max.toFixed(max < 10 ? 1 : 0)}
        {props.unit}
      </text>
      <text x={0} y={base - 2} className="chart-value">
        0
      </text>
      <TimeAxis x0={left} x1={right} y={base} ticks={ticks} caption="time (sampled every poll)" />
      {props.series.map((s) => (
        <polyline
          key={s.name}
          className={`line ${s.tone}`}
          points={s.points.map((v, i) => `${x(props.times[i] ?? first)},${y(v)}`).join(' ')}
        />
      ))}
      {props.series.map((s, i) => (
        <text key={s.name} x={left + i * 110} y={height - 4} className={`legend ${s.tone}-text`}>
          {s.name}
        </text>
      ))}
    </svg>
  );
}

/** One bucket of a column chart: its start time and one value per series. */
export interface TimeBucket {
  start: number;
  values: number[];
}

/**
 * Stacked columns over time, one per bucket (oldest left), on a labelled time axis: `ticks`
 * says which buckets get a label and how it reads. Each column's title gives its exact values.
 */
export function ColumnChart(props: {
  title: string;
  series: ReadonlyArray<{ name: string; tone: string }>;
  buckets: TimeBucket[];
  ticks: (bucket: TimeBucket, index: number) => string | undefined;
  /** How a bucket's title names its time. */
  bucketLabel: (start: number) => string;
  caption: string;
}) {
  const width = 420;
  const height = 150;
  const left = 30;
  const right = width - 6;
  const base = height - 48;
  const step = (right - left) / Math.max(1, props.buckets.length);
  const total = (b: TimeBucket) => b.values.reduce((a, v) => a + v, 0);
  const max = Math.max(1, ...props.buckets.map(total));
  const h = (v: number) => (v * (base - 16)) / max;
  const ticks = props.buckets.flatMap((b, i) => {
    const label = props.ticks(b, i);
    return label === undefined ? [] : [{ x: left + i * step, label }];
  });
  return (
    <svg className="chart" viewBox={`0 0 ${width} ${height}`} role="img" aria-label={props.title}>
      <title>{props.title}</title>
      <text x={0} y={12} className="chart-value">
        {max}
      </text>
      <text x={0} y={base - 2} className="chart-value">
        0
      </text>
      {props.buckets.map((b, i) => {
        let top = base;
        return (
          <g key={b.start} className="column">
            <title>
              {`${props.bucketLabel(b.start)}: ${props.series.map((s, k) => `${b.values[k] ?? 0} ${s.name}`).join(', ')}`}
            </title>
            {/* The whole column's height catches the pointer, so a thin one is easy to hover. */}
            <rect x={left + i * step} y={16} width={step} height={base - 16} className="column-hit" />
            {props.series.map((s, k) => {
              const v = b.values[k] ?? 0;
              if (v === 0) return null;
              top -= h(v);
              return (
                <rect
                  key={s.name}
                  x={left + i * step + step * 0.1}
                  y={top}
                  width={Math.max(step * 0.8, 0.8)}
                  height={Math.max(h(v), 1)}
                  className={s.tone}
                />
              );
            })}
          </g>
        );
      })}
      <TimeAxis x0={left} x1={right} y={base} ticks={ticks} caption={props.caption} />
      {props.series.map((s, i) => (
        <text key={s.name} x={left + i * 90} y={height - 4} className={`legend ${s.tone}-text`}>
          {s.name}
        </text>
      ))}
    </svg>
  );
}
